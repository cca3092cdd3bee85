import { createHash, randomBytes } from 'node:crypto';
import type { CloudContext } from '../context.js';

/**
 * Signed-in browsers (docs/design.md section 10). A session is a random 32-byte token in an HttpOnly cookie;
 * the database keeps only its SHA-256, so every instance recognises it and a copy of the table signs nobody
 * in. A session ends after 30 days without use, at sign-out, or when its customer is deleted.
 */
export const SESSION_IDLE_MS = 30 * 24 * 3600 * 1000;
/** How stale `last_seen_at` may get before a request writes it again: one write per hour, not per page. */
const TOUCH_AFTER_MS = 3600 * 1000;

export interface Session {
  idHash: string;
  customerId: number;
  displayName: string;
  email: string | null;
  /** The zone the customer reads times in, or null until one is proposed or chosen (read as UTC). */
  timeZone: string | null;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Starts a session and returns the token for the cookie; the token itself is never stored. */
export async function startSession(ctx: CloudContext, customerId: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('sessions')
    .values({
      id_hash: hashToken(token),
      customer_id: customerId,
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + SESSION_IDLE_MS),
    })
    .execute();
  return token;
}

/** The session a cookie names, if it is current; extends its life when it has not been seen for an hour. */
export async function findSession(ctx: CloudContext, token: string): Promise<Session | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const now = ctx.clock.now();
  const idHash = hashToken(token);
  const row = await ctx.db
    .selectFrom('sessions')
    .innerJoin('customers', 'customers.id', 'sessions.customer_id')
    .select([
      'sessions.customer_id',
      'sessions.last_seen_at',
      'customers.display_name',
      'customers.email',
      'customers.time_zone',
    ])
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return null;
  if (now.getTime() - row.last_seen_at.getTime() > TOUCH_AFTER_MS) {
    await ctx.db
      .updateTable('sessions')
      .set({ last_seen_at: now, expires_at: new Date(now.getTime() + SESSION_IDLE_MS) })
      .where('id_hash', '=', idHash)
      .execute();
  }
  return {
    idHash,
    customerId: row.customer_id,
    displayName: row.display_name,
    email: row.email,
    timeZone: row.time_zone,
  };
}

export async function endSession(ctx: CloudContext, idHash: string): Promise<void> {
  await ctx.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export async function purgeSessions(ctx: CloudContext): Promise<number> {
  const result = await ctx.db
    .deleteFrom('sessions')
    .where('expires_at', '<=', ctx.clock.now())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
