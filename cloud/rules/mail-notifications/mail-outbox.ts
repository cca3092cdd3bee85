import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { markNoticeFailed, markNoticeSent } from '../outboxes/notice-outbox.js';
import { PENDING_WAIT_MS } from '../push-notifications/push-outbox.js';
import { type NoticeSubject, SENT_NOTICE_KINDS } from '../push-notifications/sent-notice-kinds.js';

/**
 * What the delivery of e-mails of openings keeps in the database (docs/design.md section 10.7), the way the push
 * outbox keeps its own (cloud/rules/push-notifications/push-outbox.ts): which worker has which rows, and what
 * each attempt did. The same retry schedule and the same wait for an entry's outcome: an e-mail two hours late
 * is as much noise as a notification. Times are the cloud's clock.
 */

/** A row a worker has, with its kind and subject (cloud/rules/notices/notice-kinds.ts) and whom it goes to. */
export interface ClaimedMail extends NoticeSubject {
  customer_id: number;
  /** The account's confirmed address now; null when it has none any more. */
  email: string | null;
  /** The account's zone, the e-mail's time is given in; UTC when it chose none. */
  time_zone: string;
  attempts: number;
  created_at: Date;
}

/**
 * Gives this worker up to `limit` due rows for `leaseMs`, locked `for update skip locked` and leased once the
 * claim commits, as `claimPushes` does: never sent by two workers at once, and left to the others when the
 * lease of a worker that died ends.
 */
export async function claimMails(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedMail[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  const settled = new Date(now.getTime() - PENDING_WAIT_MS);
  const { rows } = await sql<ClaimedMail>`
      with due as (
        select o.id
          from opening_mail_outbox o
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
      update opening_mail_outbox o
         set locked_until = ${leaseUntil}
        from due, customers p
       where o.id = due.id and p.id = o.customer_id
      returning o.id, o.kind, o.journal_id, o.gate_alert_id, o.history_id, o.customer_id, o.attempts,
                o.created_at, case when p.email_verified_at is not null then p.email end as email,
                coalesce(p.time_zone, 'UTC') as time_zone`.execute(ctx.db);
  return rows;
}

/** What became of one attempt. */
export type MailOutcome =
  | { kind: 'sent' }
  /** The account has no confirmed address any more: nothing to try again. */
  | { kind: 'undeliverable' }
  | { kind: 'failed'; error: string };

/**
 * Writes one attempt: sent; given up at once when there is no address to send to; a failure retried later or
 * given up (cloud/rules/outboxes/notice-outbox.ts). Returns whether the row was given up.
 */
export async function recordMail(
  ctx: CloudContext,
  mail: ClaimedMail,
  outcome: MailOutcome,
  random?: () => number,
): Promise<{ gaveUp: boolean }> {
  const now = ctx.clock.now();
  if (outcome.kind === 'sent') {
    await markNoticeSent(ctx.db, 'opening_mail_outbox', mail.id, now);
    return { gaveUp: false };
  }
  const failed = outcome.kind === 'failed';
  const error = failed ? outcome.error : 'the account has no confirmed e-mail address';
  return markNoticeFailed(ctx.db, 'opening_mail_outbox', mail, { error, retry: failed, now, random });
}
