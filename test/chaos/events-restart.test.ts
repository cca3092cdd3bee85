import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AssembledContext } from '../../cloud/context.js';
import { systemClock } from '../../cloud/foundation/clock.js';
import { type DatabaseHandle, openDatabase } from '../../cloud/foundation/db/database.js';
import { CloudMetrics } from '../../cloud/foundation/metrics/cloud-metrics.js';
import { Foreground } from '../../cloud/foundation/priority/foreground.js';
import { logMailer } from '../../cloud/links/mail/mailer.js';
import { CompanyCache } from '../../cloud/rules/call-auth/company-cache.js';
import { NonceLedger } from '../../cloud/rules/call-auth/nonces.js';
import { generateVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { localCloudConfig } from '../support/cloud.js';
import { type CloudProcess, startCloudProcess } from '../support/cloud-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings, outbox } from '../support/event-company.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * A cloud killed with SIGKILL while it delivers, and started again on the same database (issue 15; docs/design.md
 * section 6): every event arrives, none is lost, and none is received twice at the same time. The cloud is a real
 * process; its database is PGlite in its data folder, or the PostgreSQL server of DATABASE_URL.
 */
const EVENTS = 60;
const SCRIPT = 'test/support/events-cloud-main.ts';

describe('a cloud killed with undelivered events', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-events-restart-'));
  const dataDir = join(dir, 'data');
  let server: TestDatabase | null = null;
  let cloud: CloudProcess | null = null;
  let receiver: WebhookReceiver | null = null;

  afterAll(async () => {
    await cloud?.kill();
    await receiver?.stop();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The database as the cloud process finds it; the embedded one only while no cloud runs on it. */
  async function withDatabase<T>(work: (ctx: AssembledContext) => Promise<T>): Promise<T> {
    const handle: DatabaseHandle = server ?? (await openDatabase({ dataDir: join(dataDir, 'db') }));
    try {
      const config = localCloudConfig(dataDir);
      const ctx: AssembledContext = {
        config,
        db: handle.db,
        clock: systemClock,
        log: recordingLogger(),
        serviceKey: SigningKey.generate(),
        vapid: generateVapidKey(),
        fetchKeyFile: async () => ({ ok: false, reason: 'unreachable', message: 'not in this test' }),
        resolveHost: async () => [],
        companyCache: new CompanyCache(systemClock),
        nonces: new NonceLedger(handle.db, systemClock),
        mailer: logMailer(recordingLogger()),
        metrics: new CloudMetrics(),
        foreground: new Foreground(),
        baseUrl: () => 'http://127.0.0.1',
      };
      return await work(ctx);
    } finally {
      if (!server) await handle.close();
    }
  }

  it('delivers every event after the restart', async () => {
    if (process.env.DATABASE_URL) server = await createTestDatabase();
    const env = {
      GATELINK_DATA_DIR: dataDir,
      OPERATOR_TOKEN: randomBytes(16).toString('hex'),
      ...(server ? { DATABASE_URL: server.url! } : {}),
    };
    // A first start makes the data folder, the database and the service key the receiver checks with.
    cloud = await startCloudProcess(env, SCRIPT);
    const published = await fetch(`${cloud.baseUrl}/.well-known/service.json`);
    const key = ((await published.json()) as { key: string }).key;
    await cloud.stop();
    receiver = new WebhookReceiver();
    await receiver.start(key);
    // Slow enough that the kill lands amid the deliveries, with attempts in flight.
    receiver.answer = () => ({ status: 200, delayMs: 40 });
    const companies = await withDatabase(async (ctx) => [
      await callbackCompany(ctx, 'Restart One', receiver!.url),
      await callbackCompany(ctx, 'Restart Two', receiver!.url),
    ]);
    const ids = await withDatabase(async (ctx) => {
      for (const companyId of companies) await enqueuePings(ctx, companyId, EVENTS / 2);
      return (await Promise.all(companies.map((id) => outbox(ctx, id)))).flat().map((event) => event.id);
    });

    cloud = await startCloudProcess(env, SCRIPT);
    await waitFor(() => receiver!.events().length >= EVENTS / 4, 'some deliveries', 20_000);
    await cloud.kill();
    cloud = null;
    const beforeRestart = receiver.events().length;
    expect(beforeRestart).toBeLessThan(EVENTS);

    cloud = await startCloudProcess(env, SCRIPT);
    await waitFor(() => receiver!.events().length === EVENTS, 'every event', 60_000);
    // Those in flight at the kill arrived then, but were not marked: they are sent again once their lease ends.
    const waiting = async () => {
      let total = 0;
      for (const companyId of companies) {
        const answer = await fetch(`${cloud!.baseUrl}/ops/companies/${companyId}/events`, {
          headers: { authorization: `Bearer ${env.OPERATOR_TOKEN}` },
        });
        total += ((await answer.json()) as { endpoint: { waiting: number } }).endpoint.waiting;
      }
      return total;
    };
    await expect.poll(waiting, { timeout: 30_000, interval: 200 }).toBe(0);
    await cloud.stop();
    cloud = null;

    expect(new Set(receiver.events().map((event) => event.id))).toEqual(new Set(ids));
    expect(receiver.received.every((item) => item.verified)).toBe(true);
    expect(receiver.concurrentDuplicates).toEqual([]);
    const undelivered = await withDatabase(
      async (ctx) =>
        (await ctx.db.selectFrom('events').select('id').where('delivered_at', 'is', null).execute()).length,
    );
    expect(undelivered).toBe(0);
  });
});
