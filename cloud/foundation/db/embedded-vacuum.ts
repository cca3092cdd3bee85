import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Database } from './database.js';

/**
 * What PostgreSQL's autovacuum does, done for the embedded database (docs/design.md section 8.3). PGlite runs
 * PostgreSQL alone inside this process, with no background workers: its `autovacuum` setting reads `on` and no
 * worker ever acts on it. Without this, every row an update or a delete leaves behind stays on disk for good and
 * every index keeps pointing at it (an opening updates its journal entry, a gate report its object, each
 * delivery its outbox row), and the planner's statistics stay those of the empty database the migrations made.
 * So every VACUUM_NAPTIME_MS the cloud reads the cumulative statistics PGlite does keep, and vacuums or analyzes
 * each table autovacuum would, by autovacuum's own default thresholds, one table at a time.
 *
 * On PGlite a statement holds the one thread the openings need too, so each table waits for a quiet moment
 * (foundation/priority/foreground.ts), as gate reports do, and one that still took long is logged with what
 * to do. On PostgreSQL the server's autovacuum does all this in processes of its own, and this never runs.
 */
export const VACUUM_NAPTIME_MS = 10_000;

/**
 * A vacuum that kept the embedded database this long kept openings waiting as long: worth a warning, since a
 * database that busy belongs on PostgreSQL.
 */
export const SLOW_VACUUM_MS = 1_000;

/** One table's activity since its last vacuum and analyze, from `pg_stat_user_tables`. */
export interface TableActivity {
  schema: string;
  table: string;
  live: number;
  dead: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
}

export type Upkeep = 'vacuum' | 'analyze';

/**
 * What autovacuum would do to a table now, by PostgreSQL's default settings (autovacuum_vacuum_threshold 50 and
 * scale factor 0.2, the insert threshold 1,000 and scale factor 0.2, autovacuum_analyze_threshold 50 and scale
 * factor 0.1): a table is vacuumed once a fifth of it is dead or new, so that each pass, which reads every index
 * whole, costs in proportion to the rows that made it due. A vacuum analyzes too.
 */
export function upkeepFor(activity: TableActivity): Upkeep | null {
  const { live } = activity;
  if (activity.dead > 50 + 0.2 * live || activity.insertedSinceVacuum > 1000 + 0.2 * live) return 'vacuum';
  if (activity.modifiedSinceAnalyze > 50 + 0.1 * live) return 'analyze';
  return null;
}

export interface UpkeepDone {
  table: string;
  upkeep: Upkeep;
  ms: number;
}

export class EmbeddedVacuum {
  readonly #db: Database;
  readonly #quiet: () => Promise<void>;
  readonly #log: FastifyBaseLogger;
  readonly #slowMs: number;
  #stopped = false;
  #letStop = () => {};
  readonly #stopping = new Promise<void>((resolve) => {
    this.#letStop = resolve;
  });

  /** `quiet`: resolves at a moment the openings leave free (the instance's Foreground, or a test's). */
  constructor(parts: { db: Database; quiet: () => Promise<void>; log: FastifyBaseLogger; slowMs?: number }) {
    this.#db = parts.db;
    this.#quiet = parts.quiet;
    this.#log = parts.log;
    this.#slowMs = parts.slowMs ?? SLOW_VACUUM_MS;
  }

  /** One pass: every table due, most dead rows first, each at a quiet moment. Says what it did. */
  async pass(): Promise<UpkeepDone[]> {
    const due = (await this.activity())
      .map((activity) => ({ activity, upkeep: upkeepFor(activity) }))
      .filter((each): each is { activity: TableActivity; upkeep: Upkeep } => each.upkeep !== null)
      .sort((a, b) => b.activity.dead - a.activity.dead);
    const done: UpkeepDone[] = [];
    for (const { activity, upkeep } of due) {
      await Promise.race([this.#quiet(), this.#stopping]);
      if (this.#stopped) break;
      done.push(await this.#keep(activity, upkeep));
    }
    return done;
  }

  /** Ends a pass waiting for a quiet moment, so that the cloud stops at once; a table being cleaned finishes. */
  stop(): void {
    this.#stopped = true;
    this.#letStop();
  }

  /** Every table's activity, as the cumulative statistics hold it. */
  async activity(): Promise<TableActivity[]> {
    const { rows } = await sql<{
      schema: string;
      table: string;
      live: string;
      dead: string;
      inserted: string;
      modified: string;
    }>`
      select schemaname as schema, relname as table, n_live_tup as live, n_dead_tup as dead,
             n_ins_since_vacuum as inserted, n_mod_since_analyze as modified
        from pg_stat_user_tables`.execute(this.#db);
    return rows.map((row) => ({
      schema: row.schema,
      table: row.table,
      live: Number(row.live),
      dead: Number(row.dead),
      insertedSinceVacuum: Number(row.inserted),
      modifiedSinceAnalyze: Number(row.modified),
    }));
  }

  async #keep(activity: TableActivity, upkeep: Upkeep): Promise<UpkeepDone> {
    const table = sql.id(activity.schema, activity.table);
    const started = performance.now();
    await (upkeep === 'vacuum' ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`).execute(this.#db);
    const ms = performance.now() - started;
    const said = {
      table: activity.table,
      upkeep,
      ms: Math.round(ms),
      dead: activity.dead,
      live: activity.live,
    };
    if (ms >= this.#slowMs) {
      this.#log.warn(
        said,
        'the embedded database kept openings waiting while it cleaned a table; a cloud this busy should run on PostgreSQL (set DATABASE_URL)',
      );
    } else {
      this.#log.debug(said, 'embedded database table cleaned');
    }
    return { table: activity.table, upkeep, ms };
  }
}
