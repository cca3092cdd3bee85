import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB, NoticeKind } from '../../foundation/db/schema.js';
import type { RecipientRows } from './recipients.js';

/**
 * Who is told of a gate left open, of it closed again, and of access granted, changed or withdrawn
 * (docs/design.md section 10.7), as the one query that writes their outbox rows, beside ./recipients.ts which
 * does the same for openings: the barrier's owner and the people it is shared with (`barrier_members`), each
 * as they chose (`notification_choices.left_open`, `.access_changes`, on when they never chose), a push row for
 * each of their browsers and an e-mail row when they take e-mails and have a confirmed address. The one who did
 * an act is not told of it. "Closed again" goes only where "left open" went (a browser, an inbox), to those
 * still in the household and still wanting it: it is the end of that notice, and news to no one else. Rows
 * repeat as no-ops (`on conflict do nothing`, whichever key: migration 0021), so a sweep or fan-out run twice
 * adds nothing.
 */
export type AlertKind = Extract<NoticeKind, 'left_open' | 'closed_again' | 'access_change'>;

/** The box each kind is chosen by. */
const WANTS: Record<AlertKind, 'left_open' | 'access_changes'> = {
  left_open: 'left_open',
  closed_again: 'left_open',
  access_change: 'access_changes',
};

/** The outbox column that names each kind's subject. */
const SUBJECT: Record<AlertKind, 'gate_alert_id' | 'history_id'> = {
  left_open: 'gate_alert_id',
  closed_again: 'gate_alert_id',
  access_change: 'history_id',
};

/** Tells the household of gates just marked left open (rows of `gate_alerts`). */
export async function tellLeftOpen(
  trx: Transaction<DB>,
  alertIds: readonly number[],
  now: Date,
): Promise<RecipientRows> {
  if (alertIds.length === 0) return { pushes: 0, mails: 0 };
  return tellAlerts(trx, 'left_open', alertSubjects(alertIds), now);
}

/** Tells those told of a gate left open that it closed again. */
export async function tellClosedAgain(
  trx: Transaction<DB>,
  alertIds: readonly number[],
  now: Date,
): Promise<RecipientRows> {
  if (alertIds.length === 0) return { pushes: 0, mails: 0 };
  return tellAlerts(trx, 'closed_again', alertSubjects(alertIds), now);
}

/**
 * Tells the household, but the one who did it, of an act in the barrier's key history: only an act by someone
 * (a key ended because the controller changed hands has nobody), and only on the household's keys (section 9.2).
 */
export function tellAccessChange(trx: Transaction<DB>, historyId: number, now: Date): Promise<RecipientRows> {
  return tellAlerts(
    trx,
    'access_change',
    sql`select h.id as subject_id, h.device_id, h.customer_id as actor_id
          from access_history h
          join devices d on d.id = h.device_id
          join keys k on k.id = h.key_id
         where h.id = ${historyId} and h.customer_id is not null
           and (k.customer_id = d.customer_id
                or exists (select 1 from barrier_members g where g.device_id = d.id and g.customer_id = k.customer_id))`,
    now,
  );
}

function alertSubjects(alertIds: readonly number[]): RawBuilder<unknown> {
  return sql`select a.id as subject_id, a.device_id, null::integer as actor_id
               from gate_alerts a where a.id in (${sql.join(alertIds)})`;
}

/** `subjects` yields (subject_id, device_id, actor_id): what is told, on which barrier, by whom (or null). */
async function tellAlerts(
  trx: Transaction<DB>,
  kind: AlertKind,
  subjects: RawBuilder<unknown>,
  now: Date,
): Promise<RecipientRows> {
  const column = sql.ref(SUBJECT[kind]);
  const wants = sql.ref(`choice.${WANTS[kind]}`);
  const closing = kind === 'closed_again';
  const toldByPush = closing
    ? sql`exists (select 1 from push_outbox l where l.subscription_id = s.id and l.kind = 'left_open'
                   and l.gate_alert_id = told.subject_id)`
    : sql`true`;
  const toldByMail = closing
    ? sql`exists (select 1 from opening_mail_outbox l where l.customer_id = told.customer_id
                   and l.kind = 'left_open' and l.gate_alert_id = told.subject_id)`
    : sql`true`;
  const { rows } = await sql<{ pushes: string; mails: string }>`
    with subject as (${subjects}),
    told as (
      select subject.subject_id, person.customer_id, coalesce(choice.by_email, false) as by_email
        from subject
        join devices d on d.id = subject.device_id
        join lateral (
          select d.customer_id as customer_id
          union
          select m.customer_id from barrier_members m where m.device_id = d.id
        ) person on person.customer_id is not null
        left join notification_choices choice
          on choice.device_id = d.id and choice.customer_id = person.customer_id
       where person.customer_id is distinct from subject.actor_id
         and coalesce(${wants}, true)
    ), pushed as (
      insert into push_outbox (subscription_id, kind, ${column}, created_at, next_attempt_at)
      select s.id, ${kind}, told.subject_id, ${now}, ${now}
        from told
        join push_subscriptions s on s.customer_id = told.customer_id
       where ${toldByPush}
      on conflict do nothing
      returning 1
    ), mailed as (
      insert into opening_mail_outbox (customer_id, kind, ${column}, created_at, next_attempt_at)
      select told.customer_id, ${kind}, told.subject_id, ${now}, ${now}
        from told
        join customers c on c.id = told.customer_id
       where told.by_email and c.email is not null and c.email_verified_at is not null and ${toldByMail}
      on conflict do nothing
      returning 1
    )
    select (select count(*) from pushed) as pushes, (select count(*) from mailed) as mails`.execute(trx);
  const row = rows[0];
  return { pushes: Number(row?.pushes ?? 0), mails: Number(row?.mails ?? 0) };
}
