import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { serverSecret } from '../../foundation/web/server-secret.js';

/**
 * One-time sign-in codes sent by e-mail (docs/design.md section 10.2): six digits from a cryptographic source,
 * stored only as an HMAC bound to their address, valid 10 minutes, used once, and dead after 5 tries. Only the
 * newest code of an address counts: asking again replaces the earlier one.
 */
export const CODE_DIGITS = 6;
export const CODE_LIFETIME_MS = 10 * 60 * 1000;
export const CODE_TRIES = 5;
/** Used and expired codes are kept a day, so that entering one again is told why it fails. */
const KEEP_AFTER_EXPIRY_MS = 24 * 3600 * 1000;

export type CodeCheck =
  | { ok: true }
  /** Not this code; `triesLeft` more before the code dies. */
  | { ok: false; reason: 'wrong'; triesLeft: number }
  /** The code was right but has been used (a replay), or has expired. */
  | { ok: false; reason: 'used' | 'expired' }
  /** The code has had its tries, or there is no live code for the address. */
  | { ok: false; reason: 'exhausted' | 'none' };

/** Makes a new code for `email` and returns it; it is stored only as its hash. */
export async function issueCode(ctx: CloudContext, email: string): Promise<string> {
  const code = randomInt(0, 10 ** CODE_DIGITS)
    .toString()
    .padStart(CODE_DIGITS, '0');
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('email_codes')
    .values({
      email,
      code_hash: await codeHash(ctx.db, email, code),
      created_at: now,
      expires_at: new Date(now.getTime() + CODE_LIFETIME_MS),
    })
    .execute();
  return code;
}

/**
 * Checks `code` against the newest code of `email`, and uses it up when it is right. Each check of a live code
 * takes one of its tries before comparing, in one statement, so that guesses sent in parallel, to any number of
 * instances, get no more than `CODE_TRIES` comparisons between them; and a right code is marked used in one
 * statement too, so that two sign-ins racing with it get one success.
 */
export async function checkCode(ctx: CloudContext, email: string, code: string): Promise<CodeCheck> {
  const now = ctx.clock.now();
  const latest = await ctx.db
    .selectFrom('email_codes')
    .select(['id', 'code_hash', 'expires_at', 'used_at', 'attempts'])
    .where('email', '=', email)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!latest) return { ok: false, reason: 'none' };
  const matches = sameHash(latest.code_hash, await codeHash(ctx.db, email, code));
  const tried = await ctx.db
    .updateTable('email_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', latest.id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('attempts', '<', CODE_TRIES)
    .returning('attempts')
    .executeTakeFirst();
  if (!tried) return deadCode(await reread(ctx.db, latest.id), matches, now);
  if (!matches) return { ok: false, reason: 'wrong', triesLeft: CODE_TRIES - tried.attempts };
  const used = await ctx.db
    .updateTable('email_codes')
    .set({ used_at: now })
    .where('id', '=', latest.id)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return used ? { ok: true } : { ok: false, reason: 'used' };
}

/** Why a code that could not be tried fails: said plainly only to someone who holds the code itself. */
function deadCode(
  row: { used_at: Date | null; expires_at: Date; attempts: number },
  matches: boolean,
  now: Date,
): CodeCheck {
  if (row.used_at) return { ok: false, reason: matches ? 'used' : 'none' };
  if (row.expires_at <= now) return { ok: false, reason: matches ? 'expired' : 'none' };
  return { ok: false, reason: 'exhausted' };
}

async function reread(db: Database, id: number) {
  return db
    .selectFrom('email_codes')
    .select(['used_at', 'expires_at', 'attempts'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/**
 * An HMAC under a secret every instance shares, over the address and the code: a copy of the table alone does
 * not give the codes away, as a plain hash of a six-digit number would.
 */
async function codeHash(db: Database, email: string, code: string): Promise<string> {
  return createHmac('sha256', await serverSecret(db, 'email-codes'))
    .update(`${email}\n${code}`)
    .digest('hex');
}

function sameHash(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(computed, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function purgeEmailCodes(ctx: CloudContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - KEEP_AFTER_EXPIRY_MS);
  const result = await ctx.db.deleteFrom('email_codes').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
