import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { markNoticeFailed, markNoticeSent } from '../outboxes/notice-outbox.js';
import { type NoticeSubject, SENT_NOTICE_KINDS } from './sent-notice-kinds.js';

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

/**
 * A row a worker has, with its kind and subject (what it tells is read by cloud/rules/notices/notice-kinds.ts)
 * and where it goes: the browser, and its account's zone, which a notice's words give times in.
 */
export interface ClaimedPush extends NoticeSubject {
  subscription_id: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  time_zone: string;
  attempts: number;
  created_at: Date;
}

/**
 * Gives this worker up to `limit` due rows for `leaseMs`: rows of a kind this release sends, not sent nor given
 * up, whose next attempt is due, whose lease (if any) ended, and, for an opening, of an entry that has its
 * outcome or waited long enough. Locked `for update skip
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
          left join journal j on j.id = o.journal_id
         where o.sent_at is null and o.gave_up_at is null
           and o.kind in (${sql.join([...SENT_NOTICE_KINDS])})
           and o.next_attempt_at <= ${now}
           and (o.locked_until is null or o.locked_until <= ${now})
           and (o.kind <> 'opening' or j.outcome is not null or j.at <= ${settled})
         order by o.next_attempt_at, o.id
         limit ${options.limit}
         for update of o skip locked
      )
      update push_outbox o
         set locked_until = ${leaseUntil}
        from due, push_subscriptions s, customers p
       where o.id = due.id and s.id = o.subscription_id and p.id = s.customer_id
      returning o.id, o.kind, o.journal_id, o.gate_alert_id, o.history_id, o.subscription_id, o.attempts,
                o.created_at, s.endpoint, s.p256dh, s.auth, coalesce(p.time_zone, 'UTC') as time_zone`.execute(
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
 * longer has removed, with its rows; a failure retried later or given up (cloud/rules/outboxes/notice-outbox.ts). Returns whether
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
