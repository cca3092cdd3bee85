import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { receiptBody, sealedRows } from './receipt-body.js';
import { type ChainVerdict, ChainWalk, keyLookup } from './receipt-chain.js';
import type { ChainId } from './sealing.js';

/**
 * The cloud's own check of its chains (docs/design.md section 5.3), as a customer's verifier would do it, from
 * the rows: each sealed entry's body computed again, its hash, its link to the one before, and the
 * controllers' signatures. Incrementally, from the last entry checked, every few minutes; in full once a day
 * and on demand (an edit to an entry checked earlier is found only so). A chain found broken stays so until a
 * full check finds it intact. The verdict is recorded on the chain: `checked_at`, `checked_seq`, and where and why it
 * broke.
 */
const CHECK_BATCH = 1000;
/** Each chain is checked from its genesis once a day, a few chains a run, so that the work spreads out. */
const FULL_CHECK_EVERY_MS = 24 * 60 * 60 * 1000;
const FULL_CHECKS_PER_RUN = 10;

/**
 * The periodic check: chains with entries sealed since their last check, from there; and the chains least
 * recently checked in full (never, or over a day ago), in full. `full` checks every chain in full now.
 */
export async function checkChains(ctx: CloudContext, options: { full?: boolean } = {}): Promise<number> {
  const chains = ctx.db.selectFrom('journal_chains').select(['device_id', 'customer_id']);
  const due = options.full
    ? await chains.execute()
    : await chains
        .where((eb) =>
          eb.or([
            eb('full_checked_at', 'is', null),
            eb('full_checked_at', '<', new Date(ctx.clock.now().getTime() - FULL_CHECK_EVERY_MS)),
          ]),
        )
        .orderBy('full_checked_at', (ob) => ob.asc().nullsFirst())
        .limit(FULL_CHECKS_PER_RUN)
        .execute();
  for (const chain of due) {
    await checkChain(ctx, { deviceId: chain.device_id, customerId: chain.customer_id }, { full: true });
  }
  if (options.full) return due.length;
  const fresh = await chains
    .where('broken_reason', 'is', null)
    .where('checked_seq', '<', (eb) => eb.ref('seq'))
    .execute();
  for (const chain of fresh) {
    await checkChain(ctx, { deviceId: chain.device_id, customerId: chain.customer_id });
  }
  return due.length + fresh.length;
}

/**
 * Every chain of a controller's barrier (one per owner it had), checked in full now: what an operator asks for
 * (`gatelink-admin receipts check`), after a restore or a suspicion, without waiting for the daily pass.
 */
export async function checkDeviceChains(
  ctx: CloudContext,
  deviceId: string,
): Promise<{ customerId: number; verdict: ChainVerdict }[]> {
  const chains = await ctx.db
    .selectFrom('journal_chains')
    .select('customer_id')
    .where('device_id', '=', deviceId)
    .orderBy('customer_id')
    .execute();
  const checked: { customerId: number; verdict: ChainVerdict }[] = [];
  for (const chain of chains) {
    const verdict = await checkChain(ctx, { deviceId, customerId: chain.customer_id }, { full: true });
    if (verdict) checked.push({ customerId: chain.customer_id, verdict });
  }
  return checked;
}

export async function checkChain(
  ctx: CloudContext,
  chain: ChainId,
  options: { full?: boolean } = {},
): Promise<ChainVerdict | null> {
  const record = await ctx.db
    .selectFrom('journal_chains')
    .select(['genesis', 'seq', 'hash', 'checked_seq', 'device_keys'])
    .where('device_id', '=', chain.deviceId)
    .where('customer_id', '=', chain.customerId)
    .executeTakeFirst();
  if (!record) return null;
  const start = options.full ? null : await checkedPoint(ctx.db, chain, record.checked_seq);
  const walk = new ChainWalk(start ?? { seq: 0, hash: record.genesis }, keyLookup(record.device_keys ?? {}));
  let after = start?.seq ?? 0;
  while (after < record.seq) {
    const rows = await sealedRows(ctx.db, chain, after, record.seq, CHECK_BATCH);
    if (rows.length === 0) break;
    let going = true;
    for (const row of rows) {
      going = walk.add({
        seq: row.chain_seq,
        prev: row.chain_prev,
        hash: row.chain_hash,
        entry: receiptBody(row),
      });
      if (!going) break;
    }
    if (!going) break;
    after = rows[rows.length - 1]!.chain_seq;
  }
  const verdict = walk.verdict({ seq: record.seq, hash: record.hash });
  await ctx.db
    .updateTable('journal_chains')
    .set({
      checked_at: ctx.clock.now(),
      checked_seq: verdict.intact ? verdict.head.seq : verdict.seq - 1,
      broken_entry: verdict.intact ? null : verdict.entry,
      broken_reason: verdict.intact ? null : verdict.reason,
      ...(options.full ? { full_checked_at: ctx.clock.now() } : {}),
    })
    .where('device_id', '=', chain.deviceId)
    .where('customer_id', '=', chain.customerId)
    .execute();
  return verdict;
}

/** Where the last check stopped: the entry at `checked_seq` and its hash, read again. */
async function checkedPoint(
  db: Database,
  chain: ChainId,
  checkedSeq: number | null,
): Promise<{ seq: number; hash: string } | null> {
  if (!checkedSeq) return null;
  const row = await db
    .selectFrom('journal')
    .select(['chain_hash'])
    .where('device_id', '=', chain.deviceId)
    .where('chain_customer', '=', chain.customerId)
    .where('chain_seq', '=', checkedSeq)
    .executeTakeFirst();
  // The entry checked last is gone: only a full check says from where.
  return row?.chain_hash ? { seq: checkedSeq, hash: row.chain_hash } : null;
}
