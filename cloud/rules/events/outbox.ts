import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { jsonb } from '../../foundation/db/database.js';
import type { DB } from '../../foundation/db/schema.js';
import type { EventData, EventType } from './event-data.js';

/**
 * Records an event in the transactional outbox, inside the transaction that makes the change it reports,
 * so an event exists exactly when its change was committed and survives a restart until delivered. Its data is
 * built by ./event-data.ts, which declares the fields of every kind. Returns the event's id.
 */
export async function enqueueEvent<T extends EventType>(
  trx: Transaction<DB>,
  event: { companyId: number; type: T; at: Date; data: EventData[T] },
): Promise<string> {
  const id = randomUUID();
  await trx
    .insertInto('events')
    .values({
      id,
      company_id: event.companyId,
      type: event.type,
      data: jsonb(event.data),
      at: event.at,
      next_attempt_at: event.at,
    })
    .execute();
  return id;
}
