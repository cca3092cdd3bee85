import { sql, type Transaction } from 'kysely';
import type { DB } from '../../foundation/db/schema.js';
import { inQuietHours } from '../notification-choices/quiet-hours.js';
import { keyOfHousehold, toldUnderChoice } from '../notification-choices/told-entries.js';

/**
 * Who is told of a journal entry (docs/design.md sections 10.6 and 10.7), as the one query that writes their
 * outbox rows: the barrier's owner and the people it is shared with (`barrier_members`, section 9.2; read here
 * with a plain query, the only place the notifications read it), each as they chose (`notification_choices`:
 * every opening when they never chose, only refusals, or nothing): a `push_outbox` row for each of their
 * browsers, and an `opening_mail_outbox` row when they also asked for e-mail and have a confirmed address. Only
 * an entry of a key granted within that household is told: a controller that changed hands keeps its earlier
 * owner's keys and journal to that owner (section 10.5), so a refused attempt with one of their keys tells the
 * new owner nothing. Refusals are written with their outcome (cloud/rules/opening/open-attempt.sql), so "only
 * refusals" is decided here, when the entry is read. Writing a row twice is a no-op, so a fan-out repeated after
 * a crash adds nothing. An entry in the person's quiet hours (cloud/rules/notification-choices/quiet-hours.ts) writes
 * neither row for them: it stays in the journal and in their daily digest.
 */
export interface RecipientRows {
  pushes: number;
  mails: number;
}

export async function addRecipients(
  trx: Transaction<DB>,
  entries: { afterId: number; uptoId: number; now: Date },
): Promise<RecipientRows> {
  // Judged at the entry's time in the person's own zone.
  const quiet = inQuietHours({
    at: 'j.at',
    zone: 'account.time_zone',
    from: 'choice.quiet_from',
    until: 'choice.quiet_until',
  });
  const { rows } = await sql<{ pushes: string; mails: string }>`
    with told as (
      select j.id as journal_id, person.customer_id, coalesce(choice.by_email, false) as by_email,
             ${quiet} as quiet
        from journal j
        join devices d on d.id = j.device_id
        join keys k on k.id = j.key_id
        join lateral (
          select d.customer_id as customer_id
          union
          select m.customer_id from barrier_members m where m.device_id = d.id
        ) person on person.customer_id is not null
        join customers account on account.id = person.customer_id
        left join notification_choices choice
          on choice.device_id = d.id and choice.customer_id = person.customer_id
       where j.id > ${entries.afterId} and j.id <= ${entries.uptoId}
         and ${keyOfHousehold({ key: 'k', device: 'd' })}
         and ${toldUnderChoice({ choice: 'choice', entry: 'j' })}
    ), pushed as (
      insert into push_outbox (subscription_id, journal_id, created_at, next_attempt_at)
      select s.id, told.journal_id, ${entries.now}, ${entries.now}
        from told
        join push_subscriptions s on s.customer_id = told.customer_id
       where not told.quiet
      on conflict (subscription_id, journal_id) do nothing
      returning 1
    ), mailed as (
      insert into opening_mail_outbox (customer_id, journal_id, created_at, next_attempt_at)
      select told.customer_id, told.journal_id, ${entries.now}, ${entries.now}
        from told
        join customers c on c.id = told.customer_id
       where told.by_email and not told.quiet and c.email is not null and c.email_verified_at is not null
      on conflict (customer_id, journal_id) do nothing
      returning 1
    )
    select (select count(*) from pushed) as pushes, (select count(*) from mailed) as mails`.execute(trx);
  const row = rows[0];
  return { pushes: Number(row?.pushes ?? 0), mails: Number(row?.mails ?? 0) };
}
