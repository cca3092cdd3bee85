import { sql, type Transaction } from 'kysely';
import type { DB } from '../../foundation/db/schema.js';

/**
 * Who is told of a journal entry (docs/design.md section 10.6), as the one query that writes their outbox rows:
 * every subscription of the barrier's owner and of the people it is shared with (`barrier_members`, section
 * 9.2; read here with a plain query, the only place push reads it). Only an entry of a key granted within that
 * household is told: a controller that changed hands keeps its earlier owner's keys and journal to that owner
 * (section 10.5), so a refused attempt with one of their keys tells the new owner nothing. Writing a row twice
 * is a no-op, so a fan-out repeated after a crash adds nothing.
 */
export async function addRecipients(
  trx: Transaction<DB>,
  entries: { afterId: number; uptoId: number; now: Date },
): Promise<number> {
  const result = await sql`
    insert into push_outbox (subscription_id, journal_id, created_at, next_attempt_at)
    select s.id, j.id, ${entries.now}, ${entries.now}
      from journal j
      join devices d on d.id = j.device_id
      join keys k on k.id = j.key_id
      join lateral (
        select d.customer_id as customer_id
        union
        select m.customer_id from barrier_members m where m.device_id = d.id
      ) told on told.customer_id is not null
      join push_subscriptions s on s.customer_id = told.customer_id
     where j.id > ${entries.afterId} and j.id <= ${entries.uptoId}
       and (k.customer_id = d.customer_id
            or exists (select 1 from barrier_members g where g.device_id = d.id and g.customer_id = k.customer_id))
    on conflict (subscription_id, journal_id) do nothing`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
