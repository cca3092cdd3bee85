import pg from 'pg';
import { benchSignedStatus } from './company-status.js';
import { benchIdleDevices } from './idle-devices.js';
import { benchOpen } from './open.js';

/**
 * `npm run bench`: every benchmark, each beside its baseline measured in the same run. PostgreSQL figures use
 * BENCH_DATABASE_URL (default: the local server); without a server they are skipped with a note.
 */
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  console.log(`Gatelink benchmarks, Node ${process.version}, ${new Date().toISOString()}`);
  const withPostgres = await postgresReachable(postgresUrl);
  await benchSignedStatus('PGlite', undefined);
  if (withPostgres) await benchSignedStatus('PostgreSQL', postgresUrl);
  else console.log(`\n(PostgreSQL at ${postgresUrl} not reachable: its figures are skipped)`);
  await benchOpen('PGlite', undefined);
  if (withPostgres) await benchOpen('PostgreSQL', postgresUrl);
  await benchIdleDevices();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
