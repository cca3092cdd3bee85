import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CloudContext } from '../../foundation/context.js';

/**
 * Consoles signed in with the operator token (docs/design.md section 11.5). Like a customer's session
 * (cloud/foundation/web/sessions.ts) the cookie holds a random 32-byte token and the database only its SHA-256, so
 * every instance recognises it and a copy of the table signs nobody in. Unlike it, a console session ends 12
 * hours after it began whatever its use (the token is the keys to every company), or at sign-out.
 */
export const OPERATOR_SESSION_MS = 12 * 3600 * 1000;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Whether `presented` is the operator token. Both sides are hashed first, so that the comparison takes the same
 * time whatever their lengths and wherever they differ.
 */
export function isOperatorToken(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && expected.length > 0;
}

/** Starts a console session and returns the token for the cookie; expired sessions are cleared on the way. */
export async function startOperatorSession(ctx: CloudContext): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await ctx.db.deleteFrom('operator_sessions').where('expires_at', '<=', now).execute();
  await ctx.db
    .insertInto('operator_sessions')
    .values({
      id_hash: hashToken(token),
      created_at: now,
      expires_at: new Date(now.getTime() + OPERATOR_SESSION_MS),
    })
    .execute();
  return token;
}

/** Whether the cookie's token names a current console session. */
export async function isOperatorSession(ctx: CloudContext, token: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  const row = await ctx.db
    .selectFrom('operator_sessions')
    .select('id_hash')
    .where('id_hash', '=', hashToken(token))
    .where('expires_at', '>', ctx.clock.now())
    .executeTakeFirst();
  return row !== undefined;
}

export async function endOperatorSession(ctx: CloudContext, token: string): Promise<void> {
  await ctx.db.deleteFrom('operator_sessions').where('id_hash', '=', hashToken(token)).execute();
}
