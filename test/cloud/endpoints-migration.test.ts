import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseLocation, migrateUpTo, openDatabase } from '../../cloud/foundation/db/database.js';
import { PGliteDialect } from '../../cloud/foundation/db/pglite-dialect.js';
import type { DB } from '../../cloud/foundation/db/schema.js';
import { createServerDatabase } from '../support/database.js';

/**
 * Migration 0036 (docs/design.md section 6.2) on a previous release's data: each company's one callback address
 * becomes its first endpoint with its state, its signing secret, its log, and a place in each event the address
 * took or received, so nothing waiting is lost and nothing delivered goes again.
 */

let location: DatabaseLocation;
let remove: () => Promise<void>;
const at = new Date('2026-11-01T10:00:00Z');

/** The previous release's schema (up to migration 0035), with its data as that release writes it. */
async function previousRelease(db: Kysely<DB>): Promise<void> {
  await migrateUpTo(db, '0035-sandbox-actions');
  await sql`
    insert into companies (id, name, status, callback_url, callback_kinds, callback_failing_since,
                           callback_failing_url, callback_last_error, callback_paused_until)
    overriding system value
    values (1, 'Addressed Ltd', 'approved', 'https://hooks.example.com/in', '{open.succeeded,open.failed}',
            ${at}, 'https://hooks.example.com/in', 'answered 503', ${at}),
           (2, 'Silent Ltd', 'approved', null, null, null, null, null, null)`.execute(db);
  const event = (id: string, company: number, type: string, extra: string) =>
    sql.raw(`insert into events (id, company_id, type, data, at, delivered_at, attempts, schedule_from,
                                 next_attempt_at, to_callback)
             values ('${id}', ${company}, '${type}', '{}', '${at.toISOString()}', ${extra})`);
  const delivered = `'${at.toISOString()}', 1, 0, '${at.toISOString()}', null`;
  await event('00000000-0000-4000-8000-000000000001', 1, 'open.succeeded', delivered).execute(db);
  await event(
    '00000000-0000-4000-8000-000000000002',
    1,
    'open.failed',
    `null, 3, 1, '${at.toISOString()}', null`,
  ).execute(db);
  await event(
    '00000000-0000-4000-8000-000000000003',
    1,
    'request.issued',
    `null, 0, 0, '${at.toISOString()}', null`,
  ).execute(db);
  await event(
    '00000000-0000-4000-8000-000000000004',
    1,
    'key.expired',
    `null, 0, 0, '${at.toISOString()}', true`,
  ).execute(db);
  await event(
    '00000000-0000-4000-8000-000000000005',
    1,
    'open.failed',
    `null, 0, 0, '${at.toISOString()}', false`,
  ).execute(db);
  await event(
    '00000000-0000-4000-8000-000000000006',
    2,
    'ping',
    `null, 0, 0, '${at.toISOString()}', null`,
  ).execute(db);
  await sql`insert into callback_secrets (company_id, sealed, hint) values (1, 'sealed', 'abcd')`.execute(db);
  await sql`
    insert into event_deliveries (company_id, event_id, type, attempt, at, url, outcome, duration_ms)
    values (1, '00000000-0000-4000-8000-000000000001', 'open.succeeded', 1, ${at},
            'https://hooks.example.com/in', 'delivered', 12)`.execute(db);
}

beforeAll(async () => {
  if (process.env.DATABASE_URL) {
    const server = await createServerDatabase(process.env.DATABASE_URL);
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    await previousRelease(db);
    await db.destroy();
    location = { url: server.url };
    remove = server.drop;
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatelink-endpoints-'));
    const pglite = await PGlite.create(dataDir);
    const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
    await previousRelease(db);
    await db.destroy();
    location = { dataDir };
    remove = () => rm(dataDir, { recursive: true, force: true });
  }
});

afterAll(async () => {
  await remove?.();
});

describe('migration 0036 on a previous release', () => {
  it("makes each company's address its first endpoint, with its state, secret, log and events", async () => {
    const handle = await openDatabase(location);
    try {
      const { db } = handle;
      const endpoints = await db.selectFrom('endpoints').selectAll().execute();
      expect(endpoints).toMatchObject([
        {
          company_id: 1,
          url: 'https://hooks.example.com/in',
          kinds: ['open.succeeded', 'open.failed'],
          failing_since: at,
          failing_url: 'https://hooks.example.com/in',
          last_error: 'answered 503',
          paused_until: at,
        },
      ]);
      const endpointId = endpoints[0]!.id;
      const places = await db
        .selectFrom('endpoint_events')
        .select(['event_id', 'delivered_at', 'attempts', 'schedule_from', 'asked'])
        .where('endpoint_id', '=', endpointId)
        .orderBy('seq')
        .execute();
      // Delivered, waiting on its retries, and asked for by name; not the kind it does not take, nor the one
      // passed over; nor another company's.
      expect(places).toEqual([
        {
          event_id: '00000000-0000-4000-8000-000000000001',
          delivered_at: at,
          attempts: 1,
          schedule_from: 0,
          asked: false,
        },
        {
          event_id: '00000000-0000-4000-8000-000000000002',
          delivered_at: null,
          attempts: 3,
          schedule_from: 1,
          asked: false,
        },
        {
          event_id: '00000000-0000-4000-8000-000000000004',
          delivered_at: null,
          attempts: 0,
          schedule_from: 0,
          asked: true,
        },
      ]);
      expect(await db.selectFrom('callback_secrets').select('endpoint_id').execute()).toEqual([
        { endpoint_id: endpointId },
      ]);
      expect(await db.selectFrom('event_deliveries').select('endpoint_id').execute()).toEqual([
        { endpoint_id: endpointId },
      ]);
    } finally {
      await handle.close();
    }
  });
});
