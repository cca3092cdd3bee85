import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { PUSH_WAKE_CHANNEL } from '../push-notifications/push-wake.js';

/** A browser `s` of someone who may grant on the barrier `d`: its owner, or a member who may grant. */
const MAY_GRANT = sql`s.customer_id = d.customer_id
  or s.customer_id in (select m.customer_id from barrier_members m where m.device_id = d.id and m.may_grant)`;

/**
 * The question goes to everyone who may answer it (docs/design.md section 10.8): the barrier's owner and the
 * members who may grant, on each browser they turned notifications on in, as a push of the kind `question`
 * (its Allow and Deny buttons), whatever they chose to be told of openings and in their quiet hours too: the
 * opening waits for them. One statement, only for a key that asks; a browser never gets the same question twice.
 */
export async function askHousehold(db: Database, input: { journalId: number; now: Date }): Promise<number> {
  // The push delivery wakes on its channel: a question is sent at once rather than at the next poll, since the
  // opening waits for it.
  const { rows } = await sql<{ asked: string }>`
    with woken as (select pg_notify(${PUSH_WAKE_CHANNEL}, '')),
    asked as (
      insert into push_outbox (subscription_id, journal_id, kind, created_at, next_attempt_at)
      select s.id, q.journal_id, 'question', ${input.now}, ${input.now}
        from opening_questions q
        join devices d on d.id = q.device_id
        join push_subscriptions s on ${MAY_GRANT}
       where q.journal_id = ${input.journalId}
      on conflict do nothing
      returning 1
    )
    select count(*) as asked from asked, woken`.execute(db);
  return Number(rows[0]?.asked ?? 0);
}

/**
 * While a phone's controller is offline, the household may call the gate themselves (docs/design.md section
 * 10.9): for an attempt on a `phone` object whose number is known, and only when someone who may grant has a
 * browser to ask on, the attempt's question becomes "call the gate" until `answerBy`, and each such browser is
 * sent it (the push of the kind `question`, its words chosen by the question's kind). A key that asked first
 * already has its question, answered Allow: it is asked again as a call, and its push rows sent again, so that
 * the notification of Allow and Deny is replaced by the one that dials. One statement; returns whether it asked.
 */
export async function askToCall(
  db: Database,
  input: { journalId: number; now: Date; answerBy: Date },
): Promise<boolean> {
  const { rows } = await sql<{ asked: string }>`
    with target as (
      select j.id as journal_id, j.device_id
        from journal j
        join device_objects o on o.id = j.object_id
       where j.id = ${input.journalId} and o.kind = 'phone' and o.gate_number is not null
         and o.removed_at is null
    ),
    browsers as (
      select s.id as subscription_id, t.journal_id
        from target t
        join devices d on d.id = t.device_id
        join push_subscriptions s on ${MAY_GRANT}
    ),
    asked as (
      insert into opening_questions (journal_id, device_id, asked_at, answer_by, kind)
      select t.journal_id, t.device_id, ${input.now}, ${input.answerBy}, 'call'
        from target t
       where exists (select 1 from browsers)
      on conflict (journal_id) do update
        set kind = 'call', asked_at = excluded.asked_at, answer_by = excluded.answer_by, answer = null,
            answered_by = null, answered_at = null
      returning 1
    ),
    pushed as (
      insert into push_outbox (subscription_id, journal_id, kind, created_at, next_attempt_at)
      select b.subscription_id, b.journal_id, 'question', ${input.now}, ${input.now} from browsers b
      on conflict (subscription_id, kind, journal_id) do update
        set created_at = excluded.created_at, next_attempt_at = excluded.next_attempt_at, attempts = 0,
            locked_until = null, sent_at = null, gave_up_at = null, last_error = null
      returning 1
    ),
    woken as (select pg_notify(${PUSH_WAKE_CHANNEL}, '') where exists (select 1 from browsers))
    select (select count(*) from asked) as asked, (select count(*) from pushed) as pushed,
           (select count(*) from woken) as woken`.execute(db);
  return Number(rows[0]?.asked ?? 0) > 0;
}

/**
 * Whether an opening of the barrier could ask to call the gate now, should its phone be offline: the rule of
 * askToCall without an attempt (a phone object whose number is known, and a browser of someone who may grant).
 * The barrier page says by it what an offline phone means for the companies.
 */
export async function mayAskToCall(db: Database, deviceId: string): Promise<boolean> {
  const { rows } = await sql<{ may: boolean }>`
    select exists (
      select 1
        from devices d
        join device_objects o on o.device_id = d.id
        join push_subscriptions s on ${MAY_GRANT}
       where d.id = ${deviceId} and o.kind = 'phone' and o.gate_number is not null and o.removed_at is null
    ) as may`.execute(db);
  return rows[0]?.may === true;
}
