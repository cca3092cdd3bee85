import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { PUSH_WAKE_CHANNEL } from '../push-notifications/push-wake.js';

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
        join push_subscriptions s
          on s.customer_id = d.customer_id
          or s.customer_id in (select m.customer_id from barrier_members m
                                where m.device_id = d.id and m.may_grant)
       where q.journal_id = ${input.journalId}
      on conflict do nothing
      returning 1
    )
    select count(*) as asked from asked, woken`.execute(db);
  return Number(rows[0]?.asked ?? 0);
}
