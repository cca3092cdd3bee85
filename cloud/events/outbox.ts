import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { jsonb } from '../db/database.js';
import type { DB } from '../db/schema.js';

/** Event kinds for the company's callback address (decisions.md section 6). */
export type EventType =
  | 'request.claimed'
  | 'request.issued'
  | 'request.revoked'
  | 'request.expired'
  | 'key.expired'
  | 'open.succeeded'
  | 'open.failed';

/**
 * Records an event in the transactional outbox, inside the transaction that makes the change it reports,
 * so an event exists exactly when its change was committed and survives a restart until delivered.
 */
export async function enqueueEvent(
  trx: Transaction<DB>,
  event: { companyId: number; type: EventType; at: Date; data: Record<string, unknown> },
): Promise<void> {
  await trx
    .insertInto('events')
    .values({
      id: randomUUID(),
      company_id: event.companyId,
      type: event.type,
      data: jsonb(event.data),
      at: event.at,
      next_attempt_at: event.at,
    })
    .execute();
}
