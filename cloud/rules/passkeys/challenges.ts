import { randomBytes } from 'node:crypto';
import type { CloudContext } from '../../foundation/context.js';
import type { ChallengePurpose } from '../../foundation/db/schema.js';
import type { AttemptLimit } from '../../foundation/web/attempt-limit.js';

/**
 * A ceremony's challenge between its two calls (docs/design.md section 10.2). It is kept in the database under
 * a random ceremony id that the browser sends back, so the second call may reach another instance; it lives 5
 * minutes and is deleted by the call that uses it, whether the passkey's answer then verifies or not, so that
 * no answer can be played twice.
 */
export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;

export interface Ceremony {
  challenge: string;
  purpose: ChallengePurpose;
  customerId: number | null;
  displayName: string | null;
}

/** A ceremony id: 24 random bytes, base64url. */
export const CEREMONY_ID = /^[A-Za-z0-9_-]{32}$/;

export async function saveCeremony(ctx: CloudContext, ceremony: Ceremony): Promise<string> {
  const id = randomBytes(24).toString('base64url');
  await ctx.db
    .insertInto('webauthn_challenges')
    .values({
      id,
      challenge: ceremony.challenge,
      purpose: ceremony.purpose,
      customer_id: ceremony.customerId,
      display_name: ceremony.displayName,
      expires_at: new Date(ctx.clock.now().getTime() + CHALLENGE_LIFETIME_MS),
    })
    .execute();
  return id;
}

/** Takes a ceremony for `purpose` out of the store; null when it is unknown, used, expired or for another purpose. */
export async function takeCeremony(
  ctx: CloudContext,
  id: string,
  purpose: ChallengePurpose,
): Promise<Ceremony | null> {
  const row = await ctx.db
    .deleteFrom('webauthn_challenges')
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .where('expires_at', '>', ctx.clock.now())
    .returning(['challenge', 'purpose', 'customer_id', 'display_name'])
    .executeTakeFirst();
  return row
    ? {
        challenge: row.challenge,
        purpose: row.purpose,
        customerId: row.customer_id,
        displayName: row.display_name,
      }
    : null;
}

export async function purgeCeremonies(ctx: CloudContext): Promise<number> {
  const result = await ctx.db
    .deleteFrom('webauthn_challenges')
    .where('expires_at', '<=', ctx.clock.now())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Every ceremony started writes a row: one address may start 30 in 10 minutes, far more than a person needs,
 * and few enough that the table cannot be flooded.
 */
export const CEREMONY_LIMIT: AttemptLimit = {
  bucket: 'passkey:ceremony:address',
  max: 30,
  windowMs: 10 * 60 * 1000,
  message: (wait) => `Too many passkey attempts from your network. Wait ${wait} and try again.`,
};
