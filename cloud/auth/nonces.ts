import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { CloudContext } from '../context.js';
import type { Database } from '../db/database.js';

/** Nonces are kept twice the timestamp tolerance, then purged: older ones are refused as stale anyway. */
export const NONCE_RETENTION_SECONDS = 600;

/** Rows in one insert: a few hundred keeps the statement small while a burst still needs only a few. */
const MAX_BATCH = 256;
/**
 * Inserts committing at once. One would leave the database idle between a commit's return and the next
 * batch; two keep one batch filling while the other commits, which is where the throughput comes from.
 */
const MAX_IN_FLIGHT = 2;

interface Waiting {
  key: string;
  companyId: number;
  nonce: string;
  settle(fresh: boolean): void;
  fail(error: unknown): void;
}

/**
 * Single use of a signed call's nonce, across every cloud instance on one database (docs/design.md section 2.1).
 * The primary key of `nonces` decides, as before; what changes is how many calls share a commit. Calls arriving
 * while an insert commits wait for the next one, which takes all of them in one statement, so a burst of signed
 * calls costs a few durable commits rather than one each. Every nonce is on disk before its call goes on: the
 * guarantee is the database's, not this instance's memory.
 */
export class NonceLedger {
  readonly #db: Database;
  readonly #clock: Clock;
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(db: Database, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Records a nonce for a company; false when it was seen before, by this instance or any other. */
  consume(companyId: number, nonce: string): Promise<boolean> {
    const lowered = nonce.toLowerCase();
    return new Promise((settle, fail) => {
      this.#queue.push({ key: `${companyId}:${lowered}`, companyId, nonce: lowered, settle, fail });
      this.#schedule();
    });
  }

  /**
   * Starts an insert at the end of this turn of the event loop, so that calls whose bodies arrived together
   * share it; a full pipeline leaves them queued for the insert that starts when one returns.
   */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#inFlight >= MAX_IN_FLIGHT || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, MAX_BATCH);
    this.#inFlight++;
    this.#insert(batch).finally(() => {
      this.#inFlight--;
      this.#schedule();
    });
    this.#schedule();
  }

  async #insert(batch: Waiting[]): Promise<void> {
    // The same nonce twice in one batch: the first call decides, the second is a replay of it.
    const unique = new Map<string, Waiting>();
    for (const waiting of batch) {
      if (unique.has(waiting.key)) waiting.settle(false);
      else unique.set(waiting.key, waiting);
    }
    const seenAt = this.#clock.now();
    try {
      const entries = [...unique.values()];
      const { rows: inserted } = await sql<{ company_id: number; nonce: string }>`
        with commit_without_waiting as (select set_config('synchronous_commit', 'off', true))
        insert into nonces (company_id, nonce, seen_at)
        select company_id, nonce, ${seenAt}::timestamptz
          from unnest(${entries.map((e) => e.companyId)}::integer[], ${entries.map((e) => e.nonce)}::text[])
            as batch (company_id, nonce), commit_without_waiting
        on conflict (company_id, nonce) do nothing
        returning company_id, nonce`.execute(this.#db);
      const fresh = new Set(inserted.map((row) => `${row.company_id}:${row.nonce}`));
      for (const waiting of unique.values()) waiting.settle(fresh.has(waiting.key));
    } catch (error) {
      for (const waiting of unique.values()) waiting.fail(error);
    }
  }
}

export async function purgeNonces(ctx: CloudContext): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - NONCE_RETENTION_SECONDS * 1000);
  const result = await ctx.db.deleteFrom('nonces').where('seen_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
