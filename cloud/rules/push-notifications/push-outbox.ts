import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { markNoticeFailed, markNoticeSent } from './notice-outbox.js';
import type { EntryFacts } from './push-payload.js';

/**
 * What the delivery of notifications keeps in the database (docs/design.md section 10.6): which worker has
 * which rows, and what each attempt did. Times are the cloud's clock, so retries and leases move with a test's
 * fake clock.
 */

/**
 * An entry whose controller has not answered is told once it has its outcome; one still without it this long
 * after (the sweep of unanswered openings settles them within some 20 s) is told as "In progress".
 */
export const PENDING_WAIT_MS = 60_000;

/** A row a worker has, with what its notification says and where it goes. */
export interface ClaimedPush extends EntryFacts {
  id: string;
  subscription_id: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  attempts: number;
  created_at: Date;
}

/**
 * Gives this worker up to `limit` due rows for `leaseMs`: rows not sent nor given up, whose next attempt is due,
 * whose lease (if any) ended, of entries that have their outcome or waited long enough. Locked `for update skip
 * locked` (two workers claiming at once each skip the other's) and leased once the claim commits, so a row is
 * never sent by two workers at once; a worker that dies leaves its rows to the others when the lease ends.
 */
export async function claimPushes(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedPush[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  const settled = new Date(now.getTime() - PENDING_WAIT_MS);
  const { rows } = await sql<ClaimedPush>`
      with due as (
        select o.id
          from push_outbox o
          join journal j on j.id = o.journal_id
         where o.sent_at is null and o.gave_up_at is null
           and o.next_attempt_at <= ${now}
           and (o.locked_until is null or o.locked_until <= ${now})
           and (j.outcome is not null or j.at <= ${settled})
         order by o.next_attempt_at, o.id
         limit ${options.limit}
         for update of o skip locked
      )
      update push_outbox o
         set locked_until = ${leaseUntil}
        from due, push_subscriptions s, journal j, devices d, companies c
       where o.id = due.id and s.id = o.subscription_id and j.id = o.journal_id
         and d.id = j.device_id and c.id = j.company_id
      returning o.id, o.subscription_id, o.attempts, o.created_at, o.journal_id,
                s.endpoint, s.p256dh, s.auth,
                j.device_id, coalesce(d.name, d.label) as barrier, c.name as company_name,
                c.domain as company_domain, c.key_pub as company_key, j.actor, j.outcome, j.detail, j.at`.execute(
    ctx.db,
  );
  return rows;
}

/** What became of one attempt. */
export type PushOutcome =
  | { kind: 'sent'; status: number }
  /** The push service says the subscription no longer exists (404 or 410). */
  | { kind: 'gone'; status: number }
  | { kind: 'failed'; status: number | null; error: string };

/**
 * Writes one attempt: a sent row and its subscription's last delivery; a subscription the push service no
 * longer has removed, with its rows; a failure retried later or given up (./notice-outbox.ts). Returns whether
 * a failed row was given up.
 */
export async function recordPush(
  ctx: CloudContext,
  push: ClaimedPush,
  outcome: PushOutcome,
  random?: () => number,
): Promise<{ gaveUp: boolean }> {
  const now = ctx.clock.now();
  if (outcome.kind === 'sent') {
    await ctx.db.transaction().execute(async (trx) => {
      await markNoticeSent(trx, 'push_outbox', push.id, now);
      await trx
        .updateTable('push_subscriptions')
        .set({ last_delivered_at: now })
        .where('id', '=', push.subscription_id)
        .execute();
    });
    return { gaveUp: false };
  }
  if (outcome.kind === 'gone') {
    await ctx.db.deleteFrom('push_subscriptions').where('id', '=', push.subscription_id).execute();
    return { gaveUp: false };
  }
  return markNoticeFailed(ctx.db, 'push_outbox', push, { error: outcome.error, retry: true, now, random });
}
