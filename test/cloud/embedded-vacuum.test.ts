import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, type DatabaseHandle, openDatabase } from '../../cloud/foundation/db/database.js';
import { EmbeddedVacuum, type TableActivity, upkeepFor } from '../../cloud/foundation/db/embedded-vacuum.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { recordingLogger } from '../support/recording-logger.js';

/**
 * The embedded database's vacuum (docs/design.md section 8.3): PGlite runs no autovacuum, so the cloud does
 * what it would. Its behaviour is PGlite's own question and runs on PGlite in memory on every pass of the
 * suites; a pass over the cloud's own tables runs on the suites' database, PostgreSQL included.
 */
const quiet = () => Promise.resolve();
const silent = () => recordingLogger() as unknown as FastifyBaseLogger;

function activity(counts: Partial<TableActivity>): TableActivity {
  return {
    schema: 'public',
    table: 't',
    live: 0,
    dead: 0,
    insertedSinceVacuum: 0,
    modifiedSinceAnalyze: 0,
    ...counts,
  };
}

describe('what autovacuum would do to a table', () => {
  it('vacuums once a fifth of the table (and 50 rows) is dead, or a fifth (and 1,000 rows) new', () => {
    expect(upkeepFor(activity({ live: 100, dead: 71 }))).toBe('vacuum');
    expect(upkeepFor(activity({ live: 100, dead: 70 }))).toBeNull();
    expect(upkeepFor(activity({ live: 100_000, dead: 15_000 }))).toBeNull();
    expect(upkeepFor(activity({ live: 100_000, dead: 20_051 }))).toBe('vacuum');
    expect(upkeepFor(activity({ live: 0, insertedSinceVacuum: 1_001 }))).toBe('vacuum');
    expect(upkeepFor(activity({ live: 0, insertedSinceVacuum: 1_000 }))).toBeNull();
  });

  it('analyzes once a tenth of the table (and 50 rows) changed since the last analyze', () => {
    expect(upkeepFor(activity({ live: 1_000, modifiedSinceAnalyze: 151 }))).toBe('analyze');
    expect(upkeepFor(activity({ live: 1_000, modifiedSinceAnalyze: 150 }))).toBeNull();
  });
});

describe('vacuum on PGlite', () => {
  let handle: DatabaseHandle;
  let db: Database;

  beforeAll(async () => {
    handle = await openDatabase({ memory: true });
    db = handle.db;
  });

  afterAll(async () => {
    await handle?.close();
  });

  /**
   * PostgreSQL hands a session's counts to the shared statistics at most once a second; the tests ask for them
   * at once rather than wait (a pass reads them every VACUUM_NAPTIME_MS, where a second's lag is nothing).
   */
  async function flushed(): Promise<void> {
    await sql`select pg_stat_force_next_flush()`.execute(db);
    await sql`select 1`.execute(db);
  }

  async function table(name: string): Promise<{ dead: number; bytes: number; vacuumed: boolean }> {
    await flushed();
    const { rows } = await sql<{ dead: string; bytes: string; vacuumed: boolean }>`
      select n_dead_tup as dead, pg_relation_size(relid) as bytes, last_vacuum is not null as vacuumed
        from pg_stat_user_tables where relname = ${name}`.execute(db);
    const row = rows[0]!;
    return { dead: Number(row.dead), bytes: Number(row.bytes), vacuumed: row.vacuumed };
  }

  /** What an outbox or a purged table lives through: a batch of rows written, the batch before deleted. */
  async function cycle(name: string, round: number): Promise<void> {
    await sql
      .raw(`insert into ${name} (k, round) select md5(g::text), ${round} from generate_series(1, 1000) g`)
      .execute(db);
    await sql.raw(`delete from ${name} where round < ${round}`).execute(db);
    await flushed();
  }

  async function outbox(name: string): Promise<void> {
    await sql
      .raw(`create table ${name} (id bigserial primary key, k text not null, round int not null)`)
      .execute(db);
    await sql.raw(`create index on ${name} (round)`).execute(db);
  }

  it('runs no autovacuum of its own: a table whose rows are written and purged keeps every dead row and grows', async () => {
    await outbox('left_alone');
    await cycle('left_alone', 0);
    const first = await table('left_alone');
    for (let round = 1; round < 20; round++) await cycle('left_alone', round);
    const later = await table('left_alone');
    expect(later).toMatchObject({ dead: 19_000, vacuumed: false });
    expect(later.bytes).toBeGreaterThan(first.bytes * 10);
  });

  it('vacuums such a table once it is due, so that it keeps to the size of what it holds', async () => {
    await outbox('kept');
    const vacuum = new EmbeddedVacuum({ db, quiet, log: silent() });
    await cycle('kept', 0);
    await cycle('kept', 1);
    const done = await vacuum.pass();
    expect(done.map((each) => [each.table, each.upkeep])).toContainEqual(['kept', 'vacuum']);
    expect(await table('kept')).toMatchObject({ dead: 0, vacuumed: true });
    // A batch is written before the one before it goes, so the table holds two at its fullest.
    const largest = async (from: number, to: number) => {
      let bytes = 0;
      for (let round = from; round < to; round++) {
        await cycle('kept', round);
        await vacuum.pass();
        bytes = Math.max(bytes, (await table('kept')).bytes);
      }
      return bytes;
    };
    const early = await largest(2, 5);
    expect(await largest(5, 20)).toBeLessThanOrEqual(early);
  });

  it('leaves a table alone that is not due', async () => {
    await sql`create table calm (id int primary key, v int)`.execute(db);
    await sql`insert into calm select g, 0 from generate_series(1, 1000) g`.execute(db);
    const vacuum = new EmbeddedVacuum({ db, quiet, log: silent() });
    await flushed();
    await vacuum.pass();
    await sql`update calm set v = 1 where id <= 100`.execute(db);
    await flushed();
    const done = await vacuum.pass();
    expect(done.map((each) => each.table)).not.toContain('calm');
    expect((await table('calm')).dead).toBe(100);
  });

  it('waits for a quiet moment before it cleans, and says so when cleaning held the database long', async () => {
    await outbox('busy');
    await cycle('busy', 0);
    await cycle('busy', 1);
    let letGo = () => {};
    const quietMoment = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let asked = 0;
    const log = recordingLogger();
    const vacuum = new EmbeddedVacuum({
      db,
      quiet: () => {
        asked++;
        return quietMoment;
      },
      log: log as unknown as FastifyBaseLogger,
      slowMs: 0,
    });
    const pass = vacuum.pass();
    await expect.poll(() => asked).toBe(1);
    expect((await table('busy')).dead).toBe(1_000);
    letGo();
    await pass;
    expect((await table('busy')).dead).toBe(0);
    expect(log.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.msg)).toContain(
      'the embedded database kept openings waiting while it cleaned a table; a cloud this busy should run on PostgreSQL (set DATABASE_URL)',
    );
  });
  it('stops at once when the cloud stops while it waits for a quiet moment, cleaning nothing more', async () => {
    await outbox('stopped');
    await cycle('stopped', 0);
    await cycle('stopped', 1);
    let asked = 0;
    const vacuum = new EmbeddedVacuum({
      db,
      quiet: () => {
        asked++;
        return new Promise<void>(() => {});
      },
      log: silent(),
    });
    const pass = vacuum.pass();
    await expect.poll(() => asked).toBe(1);
    vacuum.stop();
    await expect(pass).resolves.toEqual([]);
    expect((await table('stopped')).dead).toBe(1_000);
  });
});

describe('a pass over the cloud’s own tables', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.close();
  });

  it('reads every table’s activity and cleans those due, on this database', async () => {
    const vacuum = new EmbeddedVacuum({ db: database.db, quiet, log: silent() });
    const tables = (await vacuum.activity()).map((each) => each.table);
    expect(tables).toEqual(
      expect.arrayContaining(['journal', 'device_objects', 'events', 'gatelink_migrations']),
    );
    await expect(vacuum.pass()).resolves.toBeInstanceOf(Array);
  });
});
