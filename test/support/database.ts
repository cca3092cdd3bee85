import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import {
  type DatabaseHandle,
  type DatabaseLocation,
  migrate,
  openDatabase,
} from '../../cloud/foundation/db/database.js';
import { PGliteDialect } from '../../cloud/foundation/db/pglite-dialect.js';
import type { DB } from '../../cloud/foundation/db/schema.js';

/**
 * One database per test file: PGlite in memory by default, or a fresh PostgreSQL database on the server
 * named by DATABASE_URL (dropped again afterwards), so every suite runs unchanged on both.
 */
export interface TestDatabase extends DatabaseHandle {
  /** The PostgreSQL URL of this test's own database, for a second cloud instance; undefined on PGlite. */
  url: string | undefined;
}

export const testDatabaseKind = process.env.DATABASE_URL ? 'postgres' : 'pglite';

export async function createTestDatabase(serverUrl = process.env.DATABASE_URL): Promise<TestDatabase> {
  if (!serverUrl)
    return { ...(await openDatabase({ memory: true, ...(await migratedDump()) })), url: undefined };
  const { url, drop } = await createServerDatabase(serverUrl);
  const handle = await openDatabase({ url });
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close();
      await drop();
    },
  };
}

/**
 * The migrated database the run's global setup dumped (./pglite-template.ts), when it did; none outside
 * Vitest (the benchmarks, test/bench/), which migrate their few databases themselves.
 */
async function migratedDump(): Promise<{ from?: Blob }> {
  let file: string | undefined;
  try {
    file = inject('pgliteTemplate');
  } catch {
    file = undefined;
  }
  return file ? { from: new Blob([await readFile(file)]) } : {};
}

/** An empty database of its own on the server, and how to drop it. */
export async function createServerDatabase(
  serverUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gatelink_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

/**
 * A database as the releases before cloud/foundation/db/functions.ts left it: the migrations alone, with the functions
 * they created. A PGlite data folder of its own, or a fresh database on the server named by DATABASE_URL. Not
 * open: the test opens it with openDatabase, as a new release would, and `remove` deletes it. `inspect` sees it
 * as the migrations left it.
 */
export async function createMigratedOnlyDatabase(
  options: { inspect?: (db: Kysely<DB>) => Promise<void>; serverUrl?: string | undefined } = {},
): Promise<{ location: DatabaseLocation; remove(): Promise<void> }> {
  const { inspect = async () => {}, serverUrl = process.env.DATABASE_URL } = options;
  if (!serverUrl) {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatelink-migrated-'));
    const pglite = await PGlite.create(dataDir);
    await migrateOnly(new Kysely<DB>({ dialect: new PGliteDialect(pglite) }), inspect);
    await pglite.close();
    return { location: { dataDir }, remove: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const { url, drop } = await createServerDatabase(serverUrl);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await migrateOnly(new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), inspect);
  return { location: { url }, remove: drop };
}

async function migrateOnly(db: Kysely<DB>, inspect: (db: Kysely<DB>) => Promise<void>): Promise<void> {
  try {
    await migrate(db);
    await inspect(db);
  } finally {
    await db.destroy();
  }
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
