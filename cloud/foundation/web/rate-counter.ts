import { sql } from 'kysely';
import type { CloudContext } from '../context.js';
import type { Database } from '../db/database.js';

/**
 * Fixed-window counters in the database (docs/design.md section 10): a limit per client address or per e-mail
 * holds across every cloud instance, which a counter in one process's memory would not. One row per bucket, key
 * and window; old windows are purged by a background job.
 */
export interface Hit {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

export async function countHit(
  db: Database,
  input: { bucket: string; key: string; windowMs: number; now: Date },
): Promise<Hit> {
  const start = Math.floor(input.now.getTime() / input.windowMs) * input.windowMs;
  const row = await db
    .insertInto('rate_counters')
    .values({ bucket: input.bucket, key: input.key, window_start: new Date(start), count: 1 })
    .onConflict((oc) =>
      oc.columns(['bucket', 'key', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + 1` }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return { count: row.count, resetMs: start + input.windowMs - input.now.getTime() };
}

/** The longest window any limit uses; rows older than this are no longer read. */
const LONGEST_WINDOW_MS = 24 * 3600 * 1000;

export async function purgeRateCounters(ctx: CloudContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - LONGEST_WINDOW_MS);
  const result = await ctx.db
    .deleteFrom('rate_counters')
    .where('window_start', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
