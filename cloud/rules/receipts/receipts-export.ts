import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { SigningKey } from '../../../shared/crypto/ed25519.js';
import { signedBytes } from '../../../shared/protocol/signing.js';
import type { Database } from '../../foundation/db/database.js';
import { receiptBody, sealedRows } from './receipt-body.js';
import { type ChainLine, chainGenesis } from './receipt-chain.js';

/**
 * A customer's receipts of one barrier (docs/design.md section 5.3, docs/receipts.md): JSON lines, a header
 * signed with the service key, then every sealed entry of the customer's chain on the barrier in chain order,
 * each with its place in the chain and its receipt body computed from its row now. A verifier needs only the
 * file: the header carries the keys that check the controllers' signatures and the head the lines must reach.
 */
export const RECEIPTS_FORMAT = 'gatelink-journal-receipts/v1';
/** The purpose tag of the header's signature, so that it never verifies as a command or an event. */
export const RECEIPTS_TAG = 'gatelink/receipts/v1';

export interface ReceiptsHeader {
  [key: string]: unknown;
  format: typeof RECEIPTS_FORMAT;
  barrier: { id: string; name: string };
  customer: number;
  genesis: string;
  exported_at: string;
  device_keys: Record<string, string>;
  /** The labels of the objects the entries name, by `number_id`, as the cloud knows them now. */
  objects: Record<string, string>;
  head: { seq: number; hash: string };
  /** The customer's entries on the barrier not sealed yet (in flight, or an opening still being watched). */
  unsealed: number;
  service_key: string;
  sig: string;
}

const EXPORT_BATCH = 1000;
const HIGH_WATER = 64 * 1024;

export async function receiptsHeader(
  db: Database,
  serviceKey: SigningKey,
  input: { barrier: { id: string; name: string }; customerId: number; now: Date },
): Promise<ReceiptsHeader> {
  const chain = await db
    .selectFrom('journal_chains')
    .select(['genesis', 'seq', 'hash', 'device_keys'])
    .where('device_id', '=', input.barrier.id)
    .where('customer_id', '=', input.customerId)
    .executeTakeFirst();
  const genesis = chain?.genesis ?? chainGenesis(input.barrier.id, input.customerId);
  const head = { seq: chain?.seq ?? 0, hash: chain?.hash ?? genesis };
  const where = { deviceId: input.barrier.id, customerId: input.customerId };
  const [objects, unsealed] = [await objectLabels(db, where, head.seq), await unsealedCount(db, where)];
  const unsigned = {
    format: RECEIPTS_FORMAT as typeof RECEIPTS_FORMAT,
    barrier: input.barrier,
    customer: input.customerId,
    genesis,
    exported_at: input.now.toISOString(),
    device_keys: chain?.device_keys ?? {},
    objects,
    head,
    unsealed,
    service_key: serviceKey.publicKey.base64,
  };
  const sig = Buffer.from(serviceKey.sign(signedBytes(RECEIPTS_TAG, unsigned))).toString('base64');
  return { ...unsigned, sig };
}

async function objectLabels(
  db: Database,
  chain: { deviceId: string; customerId: number },
  upTo: number,
): Promise<Record<string, string>> {
  const result = await sql<{ id: number; label: string }>`
    select o.id, o.label from device_objects o
     where o.id in (select j.object_id from journal j
                     where j.device_id = ${chain.deviceId} and j.chain_customer = ${chain.customerId}
                       and j.chain_seq between 1 and ${upTo})
     order by o.id`.execute(db);
  return Object.fromEntries(result.rows.map((row) => [String(row.id), row.label]));
}

async function unsealedCount(db: Database, chain: { deviceId: string; customerId: number }): Promise<number> {
  const result = await sql<{ count: number }>`
    select count(*)::integer as count from journal j join keys k on k.id = j.key_id
     where j.device_id = ${chain.deviceId} and j.chain_seq is null and k.customer_id = ${chain.customerId}`.execute(
    db,
  );
  return result.rows[0]?.count ?? 0;
}

/**
 * The export as a byte stream: the header, then the chain up to the header's head, read EXPORT_BATCH lines
 * at a time and only when the stream has room again (as the CSV export, docs/design.md section 10.5); entries
 * sealed while it streams are after the head, and left out.
 */
export function receiptsStream(db: Database, header: ReceiptsHeader): Readable {
  return Readable.from(receiptsChunks(db, header), { objectMode: false, highWaterMark: HIGH_WATER });
}

async function* receiptsChunks(db: Database, header: ReceiptsHeader): AsyncGenerator<string> {
  yield `${JSON.stringify(header)}\n`;
  const chain = { deviceId: header.barrier.id, customerId: header.customer };
  let after = 0;
  while (after < header.head.seq) {
    const rows = await sealedRows(db, chain, after, header.head.seq, EXPORT_BATCH);
    if (rows.length === 0) return;
    let chunk = '';
    for (const row of rows) {
      const line: ChainLine = {
        seq: row.chain_seq,
        prev: row.chain_prev,
        hash: row.chain_hash,
        entry: receiptBody(row),
      };
      chunk += `${JSON.stringify(line)}\n`;
    }
    yield chunk;
    after = rows[rows.length - 1]!.chain_seq;
  }
}
