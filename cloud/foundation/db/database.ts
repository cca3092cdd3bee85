import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type Migration, Migrator, PostgresDialect, type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import { applyFunctions } from './functions.js';
import * as initial from './migrations/0001-initial.js';
import * as openFunctions from './migrations/0002-open-functions.js';
import * as boundedRateCount from './migrations/0003-bounded-rate-count.js';
import * as settleUnanswered from './migrations/0004-settle-unanswered.js';
import * as customerApp from './migrations/0005-customer-app.js';
import * as companyArea from './migrations/0006-company-area.js';
import * as eventDelivery from './migrations/0007-event-delivery.js';
import * as serviceKey from './migrations/0008-service-key.js';
import * as releases from './migrations/0009-releases.js';
import * as gatePositions from './migrations/0010-gate-positions.js';
import * as objectOpenings from './migrations/0011-object-openings.js';
import * as grantShapes from './migrations/0012-grant-shapes.js';
import * as declinedRequests from './migrations/0013-declined-requests.js';
import * as customerTimeZone from './migrations/0014-customer-time-zone.js';
import * as barrierHistory from './migrations/0015-barrier-history.js';
import * as households from './migrations/0016-households.js';
import * as pushSubscriptions from './migrations/0017-push-subscriptions.js';
import * as notificationChoices from './migrations/0018-notification-choices.js';
import * as askFirst from './migrations/0019-ask-first.js';
import * as quietHoursDigest from './migrations/0020-quiet-hours-digest.js';
import * as noticeKinds from './migrations/0021-notice-kinds.js';
import * as pushWake from './migrations/0022-push-wake.js';
import * as eventSchedules from './migrations/0023-event-schedules.js';
import * as callbackSigningSecrets from './migrations/0024-callback-signing-secrets.js';
import * as eventStreams from './migrations/0025-event-streams.js';
import * as attemptSamples from './migrations/0026-attempt-samples.js';
import * as companyMails from './migrations/0027-company-mails.js';
import * as memberRoles from './migrations/0028-member-roles.js';
import * as memberActions from './migrations/0029-member-actions.js';
import * as eventWakeCallbacks from './migrations/0030-event-wake-callbacks.js';
import * as phoneSetups from './migrations/0031-phone-setups.js';
import * as callTheGate from './migrations/0032-call-the-gate.js';
import * as callbackKinds from './migrations/0033-callback-kinds.js';
import * as sandbox from './migrations/0034-sandbox.js';
import * as sandboxActions from './migrations/0035-sandbox-actions.js';
import * as endpoints from './migrations/0036-endpoints.js';
import { type ConnectionUse, PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
  /** The connections' use now: the pool's on PostgreSQL, PGlite's one connection (docs/design.md section 8.1). */
  connections(): ConnectionUse;
  /**
   * Calls `onNotify` after every commit that sent a notification on `channel` (and once more whenever the
   * listening connection was made again, since notifications sent meanwhile are lost); resolves with how to
   * stop listening. What wakes the event delivery at once (docs/design.md section 6). `onNotify` is given the
   * notification's payload; on a (re)connect, none.
   */
  listen?(channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>>;
}

/**
 * Where the data lives: a PostgreSQL URL, a PGlite data folder, or PGlite in memory (tests), empty or started
 * from a dump of a data folder (`PGlite.dumpDataDir`): the test suites start each database from one dump of a
 * migrated one, as migrating afresh takes seconds on PGlite.
 */
export type DatabaseLocation = { url: string } | { dataDir: string } | { memory: true; from?: Blob };

const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-open-functions': openFunctions,
  '0003-bounded-rate-count': boundedRateCount,
  '0004-settle-unanswered': settleUnanswered,
  '0005-customer-app': customerApp,
  '0006-company-area': companyArea,
  '0007-event-delivery': eventDelivery,
  '0008-service-key': serviceKey,
  '0009-releases': releases,
  '0010-gate-positions': gatePositions,
  '0011-object-openings': objectOpenings,
  '0012-grant-shapes': grantShapes,
  '0013-declined-requests': declinedRequests,
  '0014-customer-time-zone': customerTimeZone,
  '0015-barrier-history': barrierHistory,
  '0016-households': households,
  '0017-push-subscriptions': pushSubscriptions,
  '0018-notification-choices': notificationChoices,
  '0019-ask-first': askFirst,
  '0020-quiet-hours-digest': quietHoursDigest,
  '0021-notice-kinds': noticeKinds,
  '0022-push-wake': pushWake,
  '0023-event-schedules': eventSchedules,
  '0024-callback-signing-secrets': callbackSigningSecrets,
  '0025-event-streams': eventStreams,
  '0026-attempt-samples': attemptSamples,
  '0027-company-mails': companyMails,
  '0028-member-roles': memberRoles,
  '0029-member-actions': memberActions,
  '0030-event-wake-callbacks': eventWakeCallbacks,
  '0031-phone-setups': phoneSetups,
  '0032-call-the-gate': callTheGate,
  '0033-callback-kinds': callbackKinds,
  '0034-sandbox': sandbox,
  '0035-sandbox-actions': sandboxActions,
  '0036-endpoints': endpoints,
};

/**
 * Opens the database and brings its schema up to date before anything else touches it: the migrations (tables
 * and indexes), then the functions as this tree defines them (./functions.ts).
 */
export async function openDatabase(location: DatabaseLocation): Promise<DatabaseHandle> {
  const handle = 'url' in location ? openPostgres(location.url) : await openPGlite(location);
  try {
    await migrate(handle.db);
    await applyFunctions(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

function openPostgres(url: string): DatabaseHandle {
  // A database that drops packets rather than refusing would hold a call until the client gave up: past
  // 5 s a connection attempt fails, and the call answers 503 unavailable (./database-outage.ts).
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000 });
  // An idle client that loses its server must not take the process down; the next query reconnects.
  pool.on('error', () => {});
  // Nor one that loses it while checked out between queries: pg emits that as an 'error' event, which without a
  // listener ends the process; the query in flight, if any, fails on its own and answers 503 unavailable.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    close: () => db.destroy(),
    connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotify) => listenOnPostgres(url, channel, onNotify),
  };
}

/** A connection of its own that LISTENs, made again a second after it is lost, until stopped. */
async function listenOnPostgres(
  url: string,
  channel: string,
  onNotify: (payload?: string) => void,
): Promise<() => Promise<void>> {
  const statement = `listen ${channelName(channel)}`;
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    await next.connect();
    await next.query(statement);
    if (stopped) {
      await next.end();
      return;
    }
    client = next;
    onNotify();
  };
  const lost = (which: pg.Client) => {
    if (client !== which || stopped) return;
    client = null;
    which.end().catch(() => {});
    retry = setTimeout(function again() {
      connect().catch(() => {
        if (!stopped) retry = setTimeout(again, 1000).unref();
      });
    }, 1000).unref();
  };
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const last = client;
    client = null;
    await last?.end().catch(() => {});
  };
}

function channelName(channel: string): string {
  if (!/^[a-z_]+$/.test(channel)) throw new TypeError(`not a channel name: ${channel}`);
  return channel;
}

async function openPGlite(
  location: { dataDir: string } | { memory: true; from?: Blob },
): Promise<DatabaseHandle> {
  let pglite: PGlite;
  if ('dataDir' in location) {
    mkdirSync(location.dataDir, { recursive: true });
    pglite = await PGlite.create(location.dataDir);
  } else {
    pglite = await PGlite.create(location.from ? { loadDataDir: location.from } : {});
  }
  const dialect = new PGliteDialect(pglite);
  const db = new Kysely<DB>({ dialect });
  return {
    db,
    kind: 'pglite',
    connections: () => dialect.use(),
    // The one connection listens; the LISTEN goes through the driver, so it waits for an open transaction.
    listen: async (channel, onNotify) => {
      const off = pglite.onNotification((name, payload) => {
        if (name === channel) onNotify(payload);
      });
      await sql.raw(`listen ${channelName(channel)}`).execute(db);
      return async () => {
        off();
        await sql.raw(`unlisten ${channelName(channel)}`).execute(db);
      };
    },
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/** The migrator's own tables, which record what ran; not the cloud's, so not in ./schema.ts. */
export const MIGRATION_TABLES = {
  migrations: 'gatelink_migrations',
  lock: 'gatelink_migrations_lock',
} as const;

function migrator(db: Database): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: MIGRATION_TABLES.migrations,
    migrationLockTableName: MIGRATION_TABLES.lock,
  });
}

/**
 * Runs the migrations not run yet, one at a time; instances starting together wait for each other. A database
 * a newer release has migrated further is left as it is: this release runs on the schema it expanded, which is
 * how a rollback works (docs/design.md section 8.2).
 */
export async function migrate(db: Database): Promise<void> {
  if (await migratedByNewerRelease(db)) return;
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : error}`);
  }
}

/**
 * Runs the migrations up to `name` and no further: where a test of what a later migration does with a previous
 * release's data starts (test/cloud/endpoints-migration.test.ts).
 */
export async function migrateUpTo(db: Database, name: string): Promise<void> {
  if (!(name in MIGRATIONS)) throw new Error(`no migration ${name}`);
  const { error } = await migrator(db).migrateTo(name);
  if (error) throw error;
}

/**
 * True when the database recorded every migration of this tree and others after them, which a newer release
 * ran. A recorded migration this tree does not know that sorts before its own newest is another tree's
 * history, not a newer release's: refused, naming it, rather than run on a schema nobody planned.
 */
async function migratedByNewerRelease(db: Database): Promise<boolean> {
  const table = MIGRATION_TABLES.migrations;
  const found = await sql<{ found: string | null }>`select to_regclass(${table}) as found`.execute(db);
  if (!found.rows[0]?.found) return false;
  const recorded = await sql<{ name: string }>`select name from ${sql.table(table)} order by name`.execute(
    db,
  );
  const names = new Set(recorded.rows.map((row) => row.name));
  const known = Object.keys(MIGRATIONS).sort();
  const unknown = [...names].filter((name) => !(name in MIGRATIONS));
  if (unknown.length === 0) return false;
  const newest = known[known.length - 1] ?? '';
  const stray = unknown.find((name) => name < newest) ?? known.find((name) => !names.has(name));
  if (stray) {
    throw new Error(
      `the database's migrations are not this release's (${stray} differs): run the release that migrated it, or restore a backup`,
    );
  }
  return true;
}

/** The migrations of this tree the database has not run (readiness, docs/design.md section 8.1). */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const known = await migrator(db).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/** A JSON value for a jsonb column, cast on the server so both drivers send it the same way. */
export function jsonb(value: unknown): RawBuilder<string> {
  return sql<string>`cast(${JSON.stringify(value)} as jsonb)`;
}
