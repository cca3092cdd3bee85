import { randomBytes } from 'node:crypto';
import pg from 'pg';

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

export async function createEmptyDatabase(serverUrl = POSTGRES_SERVER): Promise<EmptyDatabase> {
  const name = `gatelink_deploy_${randomBytes(6).toString('hex')}`;
  await serverQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => serverQuery(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

async function serverQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
