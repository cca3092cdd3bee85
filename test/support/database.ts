import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../cloud/db/database.js';

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
  if (!serverUrl) return { ...(await openDatabase({ memory: true })), url: undefined };
  const name = `gatelink_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString() });
  return {
    ...handle,
    url: url.toString(),
    close: async () => {
      await handle.close();
      await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
    },
  };
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
