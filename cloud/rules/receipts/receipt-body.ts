import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { JournalOutcome } from '../../foundation/db/schema.js';

/**
 * What a journal entry's receipt says (docs/design.md section 5.3), computed from the entry's row by this one
 * function, for sealing, for the export and for the cloud's own check alike: editing the row in the database
 * changes the body and so breaks its hash.
 *
 * Only what stays true across the entry's life is in it. Not the barrier's device id, which a controller
 * replacement changes (section 9.1): the chain's genesis names the barrier it began on, and the signed
 * acknowledgement names the controller that fired. Not the object's local id (replacement takes the new
 * controller's) nor its label (the controller's config may rename it): the object is its `number_id`, which
 * both keep, and the export's header gives the labels. The company's name is fixed once it is approved, which
 * it is before it holds a key.
 */
export type ReceiptJson =
  | string
  | number
  | boolean
  | null
  | ReceiptJson[]
  | { [key: string]: ReceiptJson | undefined };

export interface ReceiptBody {
  [key: string]: ReceiptJson;
  id: number;
  at: string;
  object: number | null;
  company: { id: number; name: string };
  actor: string;
  key_ref: number;
  /** `pending` never appears: a pending entry is not final, and is never sealed. */
  outcome: JournalOutcome | null;
  detail: string | null;
  acked_at: string | null;
  /** The controller's signed acknowledgement, verbatim; null for refusals and entries from before it was kept. */
  ack: ReceiptJson;
  gate: {
    opened_at: string | null;
    closed_at: string | null;
    not_moved_at: string | null;
    left_open_at: string | null;
  };
  /** The signed position reports that prove the gate's steps, verbatim, oldest first. */
  reports: ReceiptJson[];
}

/** The columns a body is computed from: the journal row and its company's name. */
export interface ReceiptRow {
  id: number;
  at: Date;
  object_id: number | null;
  company_id: number;
  company_name: string;
  actor: string;
  key_id: number;
  outcome: JournalOutcome | null;
  detail: string | null;
  acked_at: Date | null;
  ack: unknown;
  gate_opened_at: Date | null;
  gate_closed_at: Date | null;
  gate_not_moved_at: Date | null;
  left_open_at: Date | null;
  gate_reports: unknown;
}

export function receiptBody(row: ReceiptRow): ReceiptBody {
  return {
    id: row.id,
    at: row.at.toISOString(),
    object: row.object_id,
    company: { id: row.company_id, name: row.company_name },
    actor: row.actor,
    key_ref: row.key_id,
    outcome: row.outcome,
    detail: row.detail,
    acked_at: time(row.acked_at),
    ack: (row.ack ?? null) as ReceiptJson,
    gate: {
      opened_at: time(row.gate_opened_at),
      closed_at: time(row.gate_closed_at),
      not_moved_at: time(row.gate_not_moved_at),
      left_open_at: time(row.left_open_at),
    },
    reports: Array.isArray(row.gate_reports) ? (row.gate_reports as ReceiptJson[]) : [],
  };
}

function time(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/** The device ids whose signatures a body holds: its acknowledgement's and its reports'. */
export function signersOf(body: ReceiptBody): string[] {
  const ids = new Set<string>();
  for (const message of [body.ack, ...body.reports]) {
    if (message && typeof message === 'object' && !Array.isArray(message)) {
      const id = message.device_id;
      if (typeof id === 'string') ids.add(id);
    }
  }
  return [...ids];
}

/** A chain's sealed entries, as rows with their place in it, in chain order: seq in (after, upTo]. */
export async function sealedRows(
  db: Database,
  chain: { deviceId: string; customerId: number },
  after: number,
  upTo: number,
  limit: number,
): Promise<(ReceiptRow & { chain_seq: number; chain_prev: string; chain_hash: string })[]> {
  const result = await sql<ReceiptRow & { chain_seq: number; chain_prev: string; chain_hash: string }>`
    select ${RECEIPT_COLUMNS}, j.chain_seq, j.chain_prev, j.chain_hash
      from journal j
      join companies c on c.id = j.company_id
     where j.device_id = ${chain.deviceId} and j.chain_customer = ${chain.customerId}
       and j.chain_seq > ${after} and j.chain_seq <= ${upTo}
     order by j.chain_seq
     limit ${limit}`.execute(db);
  return result.rows;
}

/** The select list of a ReceiptRow, over `journal j` joined with `companies c`. */
export const RECEIPT_COLUMNS = sql`j.id, j.at, j.object_id, j.company_id, c.name as company_name, j.actor, j.key_id,
  j.outcome, j.detail, j.acked_at, j.ack, j.gate_opened_at, j.gate_closed_at, j.gate_not_moved_at, j.left_open_at,
  j.gate_reports`;
