import type { Transaction } from 'kysely';
import type { DB } from '../../foundation/db/schema.js';
import type { GateEventBase } from '../events/event-data.js';

/** A journal entry as its step events describe it, with the times they give. */
export interface SteppedEntry {
  companyId: number;
  base: GateEventBase;
  ackedAt: Date | null;
  openedAt: Date | null;
}

/**
 * Reads an opening's entry for its step events (docs/design.md section 5.2), inside the transaction that makes
 * the step: the request's code and ref through the key, as `open.*` events give them. undefined for an entry
 * without a request (none is made without one, but the event is then left out rather than the step undone).
 */
export async function steppedEntry(
  trx: Transaction<DB>,
  journalId: number,
): Promise<SteppedEntry | undefined> {
  const row = await trx
    .selectFrom('journal')
    .innerJoin('keys', 'keys.id', 'journal.key_id')
    .innerJoin('requests', 'requests.id', 'keys.request_id')
    .select([
      'journal.id',
      'journal.company_id',
      'journal.key_id',
      'journal.object_id',
      'journal.actor',
      'journal.acked_at',
      'journal.gate_opened_at',
      'requests.code',
      'requests.ref',
    ])
    .where('journal.id', '=', journalId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    companyId: row.company_id,
    base: {
      code: row.code,
      ref: row.ref,
      key_ref: row.key_id,
      number_id: row.object_id,
      actor: row.actor,
      journal_id: row.id,
    },
    ackedAt: row.acked_at,
    openedAt: row.gate_opened_at,
  };
}
