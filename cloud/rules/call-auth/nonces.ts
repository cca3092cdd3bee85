import { sql } from 'kysely';
import type { Clock } from '../../foundation/clock.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { StatementBatches } from '../../foundation/db/statement-batches.js';

/** Nonces are kept twice the timestamp tolerance, then purged: older ones are refused as stale anyway. */
export const NONCE_RETENTION_SECONDS = 600;

interface Nonce {
  companyId: number;
  /** Lowercased: a nonce's single use does not depend on the case it was sent in. */
  nonce: string;
}

/**
 * Single use of a signed call's nonce, across every cloud instance on one database (docs/design.md section 2.1).
 * The primary key of `nonces` decides, as it always did; calls arriving together share one insert, committed
 * without waiting for the disk, for the reason section 2.1 gives.
 */
export class NonceLedger {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #batches = new StatementBatches<Nonce, boolean>((rows) => this.#insert(rows), {
    maxRows: 256,
    maxInFlight: 2,
  });

  constructor(db: Database, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Records a nonce for a company; false when it was seen before, by this instance or any other. */
  consume(companyId: number, nonce: string): Promise<boolean> {
    return this.#batches.submit({ companyId, nonce: nonce.toLowerCase() });
  }

  /** One statement for the batch; a nonce it holds twice is decided by its first copy, the rest are replays. */
  async #insert(batch: Nonce[]): Promise<boolean[]> {
    const keyOf = ({ companyId, nonce }: Nonce) => `${companyId}:${nonce}`;
    const unique = new Map(batch.map((entry) => [keyOf(entry), entry]));
    const entries = [...unique.values()];
    const { rows } = await sql<{ company_id: number; nonce: string }>`
      with commit_without_waiting as (select set_config('synchronous_commit', 'off', true))
      insert into nonces (company_id, nonce, seen_at)
      select company_id, nonce, ${this.#clock.now()}::timestamptz
        from unnest(${entries.map((e) => e.companyId)}::integer[], ${entries.map((e) => e.nonce)}::text[])
          as batch (company_id, nonce), commit_without_waiting
      on conflict (company_id, nonce) do nothing
      returning company_id, nonce`.execute(this.#db);
    const fresh = new Set(rows.map((row) => keyOf({ companyId: row.company_id, nonce: row.nonce })));
    const decided = new Set<string>();
    return batch.map((entry) => {
      const key = keyOf(entry);
      const first = !decided.has(key);
      decided.add(key);
      return first && fresh.has(key);
    });
  }
}

export async function purgeNonces(ctx: CloudContext): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - NONCE_RETENTION_SECONDS * 1000);
  const result = await ctx.db.deleteFrom('nonces').where('seen_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
