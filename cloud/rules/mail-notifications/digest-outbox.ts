import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { markNoticeFailed } from '../outboxes/notice-outbox.js';

/**
 * What the daily digests keep in the database (docs/design.md section 10.7): one `mail_digests` row per person
 * and local day, unique, so that however many instances plan it, a day's digest is one row; claimed `for
 * update skip locked` with a lease as the e-mail outbox is (./mail-outbox.ts), so that one worker sends it; and
 * retried on the push schedule, then given up (cloud/rules/outboxes/notice-outbox.ts). Times are the
 * cloud's clock; days are the person's account zone.
 */

/** A digest goes from this time of the person's morning on, of the day before. */
export const DIGEST_TIME = '07:00';

/**
 * Writes a row for the day before of each person with a confirmed address who chose one e-mail a day of some
 * barrier and whose clock, in their account zone, has passed DIGEST_TIME; a row already there is left as it
 * is. Returns the rows written.
 */
export async function planDigests(ctx: CloudContext): Promise<number> {
  const now = ctx.clock.now();
  const local = sql`(${now}::timestamptz at time zone coalesce(p.time_zone, 'UTC'))`;
  const result = await sql`
    insert into mail_digests (customer_id, day, created_at, next_attempt_at)
    select p.id, to_char(${local}::date - 1, 'YYYY-MM-DD'), ${now}, ${now}
      from customers p
     where p.id in (select n.customer_id from notification_choices n where n.email_digest and not n.by_email)
       and p.email_verified_at is not null
       and to_char(${local}, 'HH24:MI') collate "C" >= ${DIGEST_TIME}
    on conflict (customer_id, day) do nothing`.execute(ctx.db);
  return Number(result.numAffectedRows ?? 0);
}

/** A digest a worker holds, with whom it goes to. */
export interface ClaimedDigest {
  id: string;
  customer_id: number;
  day: string;
  /** The account's confirmed address now; null when it has none any more. */
  email: string | null;
  /** The account's zone, the day is read in; UTC when it chose none. */
  time_zone: string;
  attempts: number;
  created_at: Date;
}

/**
 * Gives this worker up to `limit` due digests for `leaseMs`, locked `for update skip locked` and leased once
 * the claim commits: never sent by two workers at once, and left to the others when the lease of a worker that
 * died ends.
 */
export async function claimDigests(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedDigest[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  const { rows } = await sql<ClaimedDigest>`
      with due as (
        select g.id
          from mail_digests g
         where g.sent_at is null and g.gave_up_at is null
           and g.next_attempt_at <= ${now}
           and (g.locked_until is null or g.locked_until <= ${now})
         order by g.next_attempt_at, g.id
         limit ${options.limit}
         for update of g skip locked
      )
      update mail_digests g
         set locked_until = ${leaseUntil}
        from due, customers p
       where g.id = due.id and p.id = g.customer_id
      returning g.id, g.customer_id, g.day, g.attempts, g.created_at,
                case when p.email_verified_at is not null then p.email end as email,
                coalesce(p.time_zone, 'UTC') as time_zone`.execute(ctx.db);
  return rows;
}

/** What became of one digest. */
export type DigestOutcome =
  | { kind: 'sent'; lines: number }
  /** The day had nothing to tell: no e-mail, and the day is done. */
  | { kind: 'empty' }
  /** The account has no confirmed address any more: nothing to try again. */
  | { kind: 'undeliverable' }
  | { kind: 'failed'; error: string };

/** Writes one digest's outcome; returns whether it was given up. */
export async function recordDigest(
  ctx: CloudContext,
  digest: ClaimedDigest,
  outcome: DigestOutcome,
  random?: () => number,
): Promise<{ gaveUp: boolean }> {
  const now = ctx.clock.now();
  if (outcome.kind === 'sent' || outcome.kind === 'empty') {
    const sent = outcome.kind === 'sent';
    await ctx.db
      .updateTable('mail_digests')
      .set((eb) => ({
        sent_at: now,
        locked_until: null,
        lines: sent ? outcome.lines : 0,
        attempts: sent ? eb('attempts', '+', 1) : eb.ref('attempts'),
      }))
      .where('id', '=', digest.id)
      .execute();
    return { gaveUp: false };
  }
  const failed = outcome.kind === 'failed';
  const error = failed ? outcome.error : 'the account has no confirmed e-mail address';
  return markNoticeFailed(ctx.db, 'mail_digests', digest, { error, retry: failed, now, random });
}
