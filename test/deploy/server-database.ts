import pg from 'pg';
import { createServerDatabase } from '../support/database.js';

/**
 * Empty PostgreSQL databases of the deployment suites' own, as an operator makes them with createdb: a backup
 * is restored into one, two releases share one. The server is DATABASE_URL's, else the local one the house
 * tests run against; null when none answers, and the suite skips saying what to install.
 */
export const POSTGRES_SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function postgresReachable(serverUrl = POSTGRES_SERVER): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export interface EmptyDatabase {
  url: string;
  drop(): Promise<void>;
}

/** An empty database on the server, as createdb makes one (test/support/database.ts). */
export function createEmptyDatabase(serverUrl = POSTGRES_SERVER): Promise<EmptyDatabase> {
  return createServerDatabase(serverUrl);
}
