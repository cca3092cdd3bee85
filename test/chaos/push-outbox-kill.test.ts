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
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { makeVapidKey, readVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { insertEntries, journalBarrier, keyHolder } from '../support/barrier-journal.js';
import { localCloudConfig } from '../support/cloud.js';
import { type CloudProcess, startCloudProcess } from '../support/cloud-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TestPushService } from '../support/push-service.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The push outbox through a cloud killed with SIGKILL (docs/design.md section 10.6): journal entries of a barrier
 * with three browsers to tell, some written before the cloud starts and some made through the company API while
 * it runs, the cloud killed while their pushes are being sent, and started again on the same database. Every
 * entry reaches every browser at least once, none lost; a repeat is allowed (the service worker tags it with its
 * entry, so the phone replaces it). The cloud is a real process; its database is PGlite in its data folder, or
 * the PostgreSQL server of DATABASE_URL.
 */
const BACKLOG = 30;
const ATTEMPTS_BEFORE = 6;
const ATTEMPTS_AFTER = 4;
const SCRIPT = 'test/support/push-cloud-main.ts';

interface World {
  deviceId: string;
  company: { org_id: number; secret: string };
  keyRef: number;
  endpoints: string[];
}

describe('the push outbox, with a cloud killed while it sends', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-push-kill-'));
  const dataDir = join(dir, 'data');
  const config = localCloudConfig(dataDir, { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' });
  const service = new TestPushService();
  let server: TestDatabase | null = null;
  let cloud: CloudProcess | null = null;

  afterAll(async () => {
    await cloud?.kill();
    await service.stop();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The database as the cloud process finds it; the embedded one only while no cloud runs on it. */
  async function withDatabase<T>(work: (ctx: AssembledContext) => Promise<T>): Promise<T> {
    const handle: DatabaseHandle = server ?? (await openDatabase({ dataDir: join(dataDir, 'db') }));
    try {
      const ctx: AssembledContext = {
        config,
        db: handle.db,
        clock: systemClock,
        log: recordingLogger(),
        serviceKey: SigningKey.generate(),
        vapid: readVapidKey(config.vapidKeyFile),
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

  /** A barrier, its owner with two browsers and a member with one, a company's key, and a backlog of entries. */
  async function barrierWithBacklog(ctx: AssembledContext): Promise<World> {
    const owner = await createCustomer(ctx, { displayName: 'Owner' });
    const member = await createCustomer(ctx, { displayName: 'Member' });
    const barrier = await journalBarrier(ctx, owner.id, 'Front gate');
    await ctx.db
      .insertInto('barrier_members')
      .values({
        device_id: barrier.deviceId,
        customer_id: member.id,
        may_grant: false,
        added_by: owner.id,
        joined_at: new Date(),
      })
      .execute();
    const holder = await keyHolder(ctx, { customerId: owner.id, barrier, name: 'Kill Couriers' });
    const { secret } = await issueSecret(ctx, holder.companyId);
    const endpoints: string[] = [];
    for (const customerId of [owner.id, owner.id, member.id]) {
      const subscription = service.subscribe();
      await subscribe(ctx, { customerId, subscription, userAgent: 'Mozilla/5.0 (Android 14) Chrome/126.0' });
      endpoints.push(subscription.endpoint);
    }
    const outcomes = ['opened', 'opened', 'forbidden'] as const;
    await insertEntries(
      ctx,
      barrier,
      Array.from({ length: BACKLOG }, (_, i) => ({ holder, outcome: outcomes[i % outcomes.length]! })),
    );
    return {
      deviceId: barrier.deviceId,
      company: { org_id: holder.companyId, secret },
      keyRef: holder.keyRef,
      endpoints,
    };
  }

  /** An attempt through the company API on an object the key does not hold: refused, and journaled as such. */
  async function refusedAttempt(world: World, actor: string): Promise<void> {
    const answer = await fetch(`${cloud!.baseUrl}/api/company.php?a=open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...world.company, key_ref: world.keyRef, number_id: 999_999, actor }),
    });
    expect(answer.status).toBe(403);
  }

  /** Distinct (browser, entry) pairs that reached the push service, decrypted and verified. */
  function told(): Set<string> {
    return new Set(
      service.received
        .filter((push) => push.problem === null && push.payload?.kind === 'opening')
        .map((push) => `${push.subscription}/${String(push.payload?.entry)}`),
    );
  }

  /** `gatelink_push_pending` as the operator's scrape reads it. */
  async function pendingPushes(token: string): Promise<number> {
    const answer = await fetch(`${cloud!.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const pending = /^gatelink_push_pending (\d+)/m.exec(await answer.text());
    return pending ? Number(pending[1]) : Number.NaN;
  }

  it('tells every entry to every browser after the restart, none lost', async () => {
    if (process.env.DATABASE_URL) server = await createTestDatabase();
    const env = {
      GATELINK_DATA_DIR: dataDir,
      GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1',
      OPERATOR_TOKEN: randomBytes(16).toString('hex'),
      ...(server ? { DATABASE_URL: server.url! } : {}),
    };
    // The VAPID key is made as `gatelink-admin keys init` makes it, before the first start, which reads it.
    await service.start(makeVapidKey(config.vapidKeyFile).publicKey);
    // Slow enough that the kill lands amid the sends, with pushes in flight.
    service.answer = () => ({ status: 201, delayMs: 60 });
    const world = await withDatabase(barrierWithBacklog);
    const browsers = world.endpoints.length;

    cloud = await startCloudProcess(env, SCRIPT);
    for (let i = 0; i < ATTEMPTS_BEFORE; i++) await refusedAttempt(world, `Before ${i}`);
    await waitFor(() => told().size >= browsers * 8, 'some pushes', 20_000);
    await cloud.kill();
    cloud = null;
    const beforeRestart = told().size;
    expect(beforeRestart).toBeLessThan(browsers * (BACKLOG + ATTEMPTS_BEFORE));

    cloud = await startCloudProcess(env, SCRIPT);
    for (let i = 0; i < ATTEMPTS_AFTER; i++) await refusedAttempt(world, `After ${i}`);
    const entries = BACKLOG + ATTEMPTS_BEFORE + ATTEMPTS_AFTER;
    // Those in flight at the kill arrived then but were not marked: sent again once their lease ends (7 s).
    await waitFor(() => told().size === browsers * entries, 'every entry at every browser', 40_000);
    // Pushes that arrived just before the kill are marked only once sent again: the outbox drains after that.
    await expect.poll(() => pendingPushes(env.OPERATOR_TOKEN), { timeout: 20_000, interval: 200 }).toBe(0);
    await cloud.stop();
    cloud = null;

    const journal = await withDatabase((ctx) =>
      ctx.db.selectFrom('journal').select('id').where('device_id', '=', world.deviceId).execute(),
    );
    expect(journal).toHaveLength(entries);
    const expected = world.endpoints.flatMap((endpoint) =>
      journal.map((entry) => `${endpoint.split('/').pop()}/${entry.id}`),
    );
    expect(told()).toEqual(new Set(expected));
    expect(service.received.every((push) => push.problem === null)).toBe(true);
    const unsent = await withDatabase((ctx) =>
      ctx.db
        .selectFrom('push_outbox')
        .select(['id', 'gave_up_at'])
        .where((eb) => eb.or([eb('sent_at', 'is', null), eb('gave_up_at', 'is not', null)]))
        .execute(),
    );
    expect(unsent).toEqual([]);
  });
});
