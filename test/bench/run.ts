import pg from 'pg';
import { benchSignedStatus } from './company-status.js';
import { benchDevice } from './device.js';
import { benchEvents } from './events.js';
import { benchFleet } from './fleet.js';
import { benchIdleDevices } from './idle-devices.js';
import { benchJournal } from './journal.js';
import { benchMqttFlood } from './mqtt-flood.js';
import { benchNotify } from './notify.js';
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

/** Each benchmark by name; `npm run bench -- open` runs only the ones named. */
const BENCHES: Record<string, (postgres: string | undefined) => Promise<void>> = {
  status: async (postgres) => {
    await benchSignedStatus('PGlite', undefined);
    if (postgres) await benchSignedStatus('PostgreSQL', postgres);
  },
  open: async (postgres) => {
    await benchOpen('PGlite', undefined);
    if (postgres) await benchOpen('PostgreSQL', postgres);
  },
  // A million entries are written for it: on the server named by DATABASE_URL, else on PGlite.
  journal: async () => {
    if (!process.env.DATABASE_URL) {
      console.log('\n(journal: DATABASE_URL is not set, so on PGlite; its target is for PostgreSQL)');
    }
    await benchJournal(process.env.DATABASE_URL);
  },
  idle: (postgres) => benchIdleDevices(postgres),
  // Its target is for PostgreSQL; PGlite's figures are shown beside for the embedded database.
  events: async (postgres) => {
    if (postgres) await benchEvents('PostgreSQL', postgres);
    await benchEvents('PGlite', undefined);
  },
  // Web Push of journal entries: its targets are for PostgreSQL; PGlite's figures are shown beside.
  notify: async (postgres) => {
    if (postgres) await benchNotify('PostgreSQL', postgres);
    await benchNotify('PGlite', undefined);
  },
  flood: () => benchMqttFlood(),
  // 100 controllers, 1,000 keys, openings at fixed rates from several processes; PostgreSQL only.
  fleet: (postgres) => benchFleet(postgres),
  // The controller daemon beside a bare mqtt.js client; no database of its own (the cloud runs on PGlite).
  device: () => benchDevice(),
};

async function main(): Promise<void> {
  const chosen = process.argv.slice(2);
  const unknown = chosen.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) {
    throw new Error(
      `unknown benchmark ${unknown.join(', ')}: choose from ${Object.keys(BENCHES).join(', ')}`,
    );
  }
  console.log(`Gatelink benchmarks, Node ${process.version}, ${new Date().toISOString()}`);
  const postgres = (await postgresReachable(postgresUrl)) ? postgresUrl : undefined;
  if (!postgres) console.log(`(PostgreSQL at ${postgresUrl} not reachable: its figures are skipped)`);
  for (const [name, run] of Object.entries(BENCHES)) {
    if (chosen.length === 0 || chosen.includes(name)) await run(postgres);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
