import { type Transaction as KyselyTransaction, sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { DB } from '../../foundation/db/schema.js';
import { RECEIPT_COLUMNS, type ReceiptRow, receiptBody, signersOf } from './receipt-body.js';
import { chainGenesis, entryHash } from './receipt-chain.js';

type Transaction = KyselyTransaction<DB>;

/**
 * Sealing (docs/design.md section 5.3): a final entry gets its place in its barrier's chain for its owner
 * (the customer whose key it names), its `prev` and its hash. It runs off the opening's path, as a job, and
 * appends entries in the order they become final, so an opening waiting for its gate to close never holds up
 * the refusals after it. Each chain's batch is one transaction that holds its `journal_chains` row, so two
 * instances never seal one entry twice nor fork a chain (the unique index on (device_id, chain_customer,
 * chain_seq) would refuse a fork anyway).
 */

/** Facts about an opening arrive for a day at most: an entry still open then is sealed as it stands. */
export const SEALING_HORIZON_MS = 24 * 60 * 60 * 1000;
/** Entries sealed per chain per transaction: the first run on a long journal seals it in steps. */
export const SEAL_BATCH = 1000;
/** Chains looked at per round. */
const CHAINS_PER_ROUND = 100;

export interface ChainId {
  deviceId: string;
  customerId: number;
}

/** Seals every entry that is final at the clock's time; returns how many. */
export async function sealFinalEntries(
  ctx: CloudContext,
  options: { batchSize?: number } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? SEAL_BATCH;
  let sealed = 0;
  for (;;) {
    const chains = await chainsWithFinalEntries(ctx, CHAINS_PER_ROUND);
    let round = 0;
    for (const chain of chains) {
      for (;;) {
        const count = await sealChainBatch(ctx, chain, batchSize);
        round += count;
        if (count < batchSize) break;
      }
    }
    sealed += round;
    if (chains.length < CHAINS_PER_ROUND || round === 0) return sealed;
  }
}

/**
 * Final, by outcome (docs/design.md section 5.3): a refusal, a controller's error or an offline controller at
 * once; no answer (`device_timeout`) a day after the attempt, since a late acknowledgement still completes it;
 * an opening once nothing more can be seen of it: its object has no sensor, or the gate closed, or it did
 * not move, or a day passed; an entry in flight (no outcome) never.
 */
function finalAt(now: Date) {
  const horizon = new Date(now.getTime() - SEALING_HORIZON_MS);
  return sql<boolean>`(
    j.outcome in ('revoked', 'expired', 'rate_limit', 'forbidden', 'not_started', 'outside_hours',
                  'openings_used', 'device_error', 'device_offline')
    or (j.outcome = 'device_timeout' and j.at <= ${horizon})
    or (j.outcome = 'opened' and (
      o.has_sensor is not true or j.gate_closed_at is not null or j.gate_not_moved_at is not null
      or coalesce(j.acked_at, j.at) <= ${horizon}
    ))
  )`;
}

async function chainsWithFinalEntries(ctx: CloudContext, limit: number): Promise<ChainId[]> {
  const result = await sql<{ device_id: string; customer_id: number }>`
    select distinct j.device_id, k.customer_id
      from journal j
      join keys k on k.id = j.key_id
      left join device_objects o on o.id = j.object_id
     where j.chain_seq is null and j.device_id is not null and ${finalAt(ctx.clock.now())}
     limit ${limit}`.execute(ctx.db);
  return result.rows.map((row) => ({ deviceId: row.device_id, customerId: row.customer_id }));
}

/**
 * One transaction: the chain's row is made if new and locked, then up to `batchSize` of its final entries
 * are locked (an attaching update waits, and then finds them sealed), hashed in entry order after the head,
 * and written with the new head in one statement each. Returns how many were sealed.
 */
export async function sealChainBatch(ctx: CloudContext, chain: ChainId, batchSize: number): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const genesis = chainGenesis(chain.deviceId, chain.customerId);
    await trx
      .insertInto('journal_chains')
      .values({ device_id: chain.deviceId, customer_id: chain.customerId, genesis, hash: genesis })
      .onConflict((oc) => oc.columns(['device_id', 'customer_id']).doNothing())
      .execute();
    const head = await trx
      .selectFrom('journal_chains')
      .select(['seq', 'hash', 'device_keys'])
      .where('device_id', '=', chain.deviceId)
      .where('customer_id', '=', chain.customerId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const rows = await finalRows(trx, chain, now, batchSize);
    if (rows.length === 0) {
      // Made for entries that another instance sealed, or that a replacement moved meanwhile: not kept empty.
      if (head.seq === 0) await deleteChain(trx, chain);
      return 0;
    }
    let { seq, hash } = head;
    const links: { id: number; seq: number; prev: string; hash: string }[] = [];
    const signers = new Set<string>();
    for (const row of rows) {
      const body = receiptBody(row);
      for (const id of signersOf(body)) signers.add(id);
      const prev = hash;
      hash = entryHash(prev, body);
      seq++;
      links.push({ id: row.id, seq, prev, hash });
    }
    await writeLinks(trx, chain.customerId, links);
    const deviceKeys = await withKeysOf(trx, head.device_keys ?? {}, signers);
    await trx
      .updateTable('journal_chains')
      .set({ seq, hash, device_keys: JSON.stringify(deviceKeys) })
      .where('device_id', '=', chain.deviceId)
      .where('customer_id', '=', chain.customerId)
      .execute();
    return rows.length;
  });
}

async function finalRows(trx: Transaction, chain: ChainId, now: Date, limit: number): Promise<ReceiptRow[]> {
  const result = await sql<ReceiptRow>`
    select ${RECEIPT_COLUMNS}
      from journal j
      join keys k on k.id = j.key_id
      join companies c on c.id = j.company_id
      left join device_objects o on o.id = j.object_id
     where j.device_id = ${chain.deviceId} and k.customer_id = ${chain.customerId}
       and j.chain_seq is null and ${finalAt(now)}
     order by j.id
     limit ${limit}
       for update of j`.execute(trx);
  return result.rows;
}

async function writeLinks(
  trx: Transaction,
  customerId: number,
  links: { id: number; seq: number; prev: string; hash: string }[],
): Promise<void> {
  await sql`
    update journal
       set chain_customer = ${customerId}, chain_seq = link.seq, chain_prev = link.prev, chain_hash = link.hash
      from unnest(${links.map((l) => l.id)}::integer[], ${links.map((l) => l.seq)}::integer[],
                  ${links.map((l) => l.prev)}::text[], ${links.map((l) => l.hash)}::text[])
           as link (id, seq, prev, hash)
     where journal.id = link.id`.execute(trx);
}

/**
 * The chain's controllers' keys with those of `signers` added: a controller's current key, or the one kept
 * when it was retired (a replaced controller's acknowledgements move to the new one's barrier).
 */
async function withKeysOf(
  trx: Transaction,
  known: Record<string, string>,
  signers: Set<string>,
): Promise<Record<string, string>> {
  const missing = [...signers].filter((id) => !Object.hasOwn(known, id));
  if (missing.length === 0) return known;
  const current = await trx
    .selectFrom('devices')
    .select(['id', 'public_key'])
    .where('id', 'in', missing)
    .execute();
  const retired = await trx
    .selectFrom('retired_device_keys')
    .select(['device_id as id', 'public_key'])
    .where('device_id', 'in', missing)
    .execute();
  const keys = { ...known };
  for (const row of [...retired, ...current]) if (row.public_key) keys[row.id] = row.public_key;
  return keys;
}

async function deleteChain(trx: Transaction, chain: ChainId): Promise<void> {
  await trx
    .deleteFrom('journal_chains')
    .where('device_id', '=', chain.deviceId)
    .where('customer_id', '=', chain.customerId)
    .execute();
}
