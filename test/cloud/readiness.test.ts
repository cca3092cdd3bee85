import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerKindSkipReason } from '../support/broker-env.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { waitFor } from '../support/wait-for.js';

/**
 * `GET /readyz` (docs/design.md section 8.1): 200 once the database answers with every migration run and the
 * broker links controllers, else 503 naming what is not ready; `/healthz` says only that the process serves.
 * Each part is made unready for real: a migration unrecorded, the broker stopped (embedded) or gone (Mosquitto),
 * the database closed under the cloud.
 */

let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function readiness(from: TestCloud): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await from.app.inject({ method: 'GET', url: '/readyz' });
  return { status: response.statusCode, body: JSON.parse(response.body) as Record<string, unknown> };
}

async function healthy(from: TestCloud): Promise<boolean> {
  return (await from.app.inject({ method: 'GET', url: '/healthz' })).statusCode === 200;
}

describe('/readyz', () => {
  it('answers 200 once the database, its migrations and the broker are ready, without a token', async () => {
    expect(await readiness(cloud)).toEqual({ status: 200, body: { ok: 1 } });
  });

  it('answers 503 naming the migrations while one of this release is not recorded as run', async () => {
    const db = cloud.ctx.db;
    const { rows } = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from gatelink_migrations order by name desc limit 1`.execute(db);
    const last = rows[0]!;
    await sql`delete from gatelink_migrations where name = ${last.name}`.execute(db);
    try {
      expect(await readiness(cloud)).toEqual({ status: 503, body: { ok: 0, not_ready: ['migrations'] } });
      expect(await healthy(cloud)).toBe(true);
    } finally {
      await sql`insert into gatelink_migrations (name, timestamp) values (${last.name}, ${last.timestamp})`.execute(
        db,
      );
    }
    expect((await readiness(cloud)).status).toBe(200);
  });

  it('answers 503 naming the broker once the embedded broker stopped listening', async () => {
    const own = await startTestCloud({ database });
    try {
      expect((await readiness(own)).status).toBe(200);
      await own.controllerLink.stop();
      expect(await readiness(own)).toEqual({ status: 503, body: { ok: 0, not_ready: ['broker'] } });
      expect(await healthy(own)).toBe(true);
    } finally {
      await own.stop();
    }
  });

  it('answers 503 naming the database once the database no longer answers', async () => {
    const lost = await createTestDatabase();
    const own = await startTestCloud({ database: lost });
    try {
      expect((await readiness(own)).status).toBe(200);
      await lost.close();
      expect(await readiness(own)).toEqual({ status: 503, body: { ok: 0, not_ready: ['database'] } });
      expect(await healthy(own)).toBe(true);
    } finally {
      await own.stop();
    }
  });

  describe.skipIf(brokerKindSkipReason('external') !== null)('with an external broker', () => {
    let mosquitto: TestMosquitto | null = null;

    afterAll(async () => {
      await mosquitto?.stop();
    });

    it("answers 503 naming the broker while the cloud's session with Mosquitto is lost", async () => {
      mosquitto = await startMosquitto('readyz/gl');
      const own = await startTestCloud({
        database,
        env: {
          MQTT_URL: mosquitto.cloudUrl,
          MQTT_PUBLIC_URL: mosquitto.deviceUrl,
          MQTT_TOPIC_PREFIX: 'readyz/gl',
        },
      });
      try {
        expect((await readiness(own)).status).toBe(200);
        await mosquitto.stop();
        mosquitto = null;
        await waitFor(
          async () => (await readiness(own)).status === 503,
          'the cloud to notice the broker is gone',
        );
        expect(await readiness(own)).toEqual({ status: 503, body: { ok: 0, not_ready: ['broker'] } });
        expect(await healthy(own)).toBe(true);
      } finally {
        await own.stop();
      }
    });
  });
});
