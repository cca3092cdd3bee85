import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDuePushes, type PushDeliveryOptions } from '../../cloud/links/web-push/push-delivery.js';
import { GIVE_UP_AFTER_MS, PUSH_RETRY_DELAYS_MS } from '../../cloud/rules/outboxes/notice-retry-schedule.js';
import { fanOutJournal, GAP_GRACE_MS } from '../../cloud/rules/push-notifications/journal-fan-out.js';
import { claimPushes } from '../../cloud/rules/push-notifications/push-outbox.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import type { Controller } from '../../device/runtime/controller.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProvisionedGate, provisionGate } from '../support/provisioned-gate.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Web Push of openings to the customer's browsers (docs/design.md section 10.6), end to end: an opening through
 * the company API and a controller in this process lands in the journal, the fan-out reads it into the outbox,
 * and the delivery sends it to a push service on loopback that checks the VAPID JWT and decrypts the payload
 * with the browser's own keys. Driven by hand (`deliverDuePushes`) with a fake clock for the retry schedule,
 * then once by a running worker in a second instance.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
/** Loopback push services, and no jitter: each retry comes exactly at its scheduled delay. */
const LOCAL: Partial<PushDeliveryOptions> = {
  allowPrivateAddresses: true,
  timeoutMs: 5_000,
  random: () => 0.5,
};
const deliver = (options: Partial<PushDeliveryOptions> = {}, stop?: AbortSignal) =>
  deliverDuePushes(cloud.ctx, { ...LOCAL, ...options }, stop);

let database: TestDatabase;
let cloud: TestCloud;
let gate: ProvisionedGate;
let controller: Controller;
let service: TestPushService;
let ownerId: number;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  service = new TestPushService();
  await service.start(cloud.ctx.vapid.publicKey);
  gate = await provisionGate(cloud);
  controller = await gate.startController();
  const device = await cloud.ctx.db
    .selectFrom('devices')
    .select('customer_id')
    .where('id', '=', gate.deviceId)
    .executeTakeFirstOrThrow();
  ownerId = device.customer_id!;
});

afterEach(async () => {
  // Each test's browsers go, with whatever they were still owed.
  await cloud.ctx.db.deleteFrom('push_subscriptions').execute();
  service.answer = () => 201;
  service.received.length = 0;
});

afterAll(async () => {
  await controller?.stop();
  await gate?.remove();
  await service?.stop();
  await cloud?.stop();
  await database?.close();
});

async function browserOf(
  customerId: number,
  userAgent = 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile',
): Promise<BrowserSubscription & { id: number }> {
  const subscription = service.subscribe();
  const id = await subscribe(cloud.ctx, { customerId, subscription, userAgent });
  return { ...subscription, id };
}

/**
 * An opening through the company API. The controller in this process refuses a command signed on a clock far
 * from its own, so the fake clock is brought back to the real time first; tests move it forward afterwards.
 */
async function opened(): Promise<number> {
  clock.set(new Date());
  const answer = await gate.open(await gate.newKey());
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const id = answer.body.id as number;
  // The 200 goes out with the verified acknowledgement; the entry's outcome is written a moment later.
  await waitFor(async () => {
    const entry = await cloud.ctx.db
      .selectFrom('journal')
      .select('outcome')
      .where('id', '=', id)
      .executeTakeFirst();
    return entry?.outcome === 'opened';
  }, 'the entry to be completed');
  return id;
}

async function outboxOf(subscriptionId: number) {
  return cloud.ctx.db
    .selectFrom('push_outbox')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('id')
    .execute();
}

describe('an opening', () => {
  it("reaches the owner's browser through its push service, decrypted, with what the journal says and nothing secret", async () => {
    const browser = await browserOf(ownerId);
    const stranger = await browserOf(
      (
        await cloud.ctx.db
          .insertInto('customers')
          .values({ display_name: 'Other' })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    const entry = await opened();

    expect(await deliver()).toEqual({ sent: 1, gone: 0, failed: 0, gaveUp: 0 });

    const [push] = service.received;
    expect(push?.problem).toBeNull();
    expect(push?.headers['content-encoding']).toBe('aes128gcm');
    expect(Number(push?.headers.ttl)).toBeGreaterThan(0);
    expect(push?.claims?.aud).toBe(new URL(browser.endpoint).origin);
    const [payload] = service.payloadsFor(browser);
    expect(payload).toEqual({
      kind: 'opening',
      entry,
      barrier: 'Yard',
      company: 'Gate Couriers',
      company_domain: null,
      actor: 'Driver 7',
      outcome: 'Opened',
      outcome_code: 'opened',
      at: clock.now().toISOString(),
      url: `${cloud.baseUrl}/barriers/${gate.deviceId}/journal`,
    });
    expect(service.payloadsFor(stranger)).toEqual([]);
    const [row] = await outboxOf(browser.id);
    expect(row).toMatchObject({ journal_id: entry, attempts: 1, locked_until: null, gave_up_at: null });
    expect(row?.sent_at).not.toBeNull();
  });

  it("refused, tells the refusal in the journal's words", async () => {
    const browser = await browserOf(ownerId);
    clock.set(new Date());
    const keyRef = await gate.newKey();
    const refused = await cloud.call('open', {
      ...(await companyOf(keyRef)),
      key_ref: keyRef,
      number_id: gate.numberId + 1000,
      actor: 'Driver 8',
    });
    expect(refused.status).toBe(403);

    await deliver();

    expect(service.payloadsFor(browser)).toEqual([
      expect.objectContaining({
        actor: 'Driver 8',
        outcome: 'Refused: not in the key',
        outcome_code: 'forbidden',
      }),
    ]);
  });

  it('is told to every browser of the owner and of the people the barrier is shared with, once each', async () => {
    const phone = await browserOf(ownerId);
    const laptop = await browserOf(ownerId, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0');
    const member = await cloud.ctx.db
      .insertInto('customers')
      .values({ display_name: 'Member' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await cloud.ctx.db
      .insertInto('barrier_members')
      .values({
        device_id: gate.deviceId,
        customer_id: member.id,
        may_grant: false,
        added_by: ownerId,
        joined_at: clock.now(),
      })
      .execute();
    // The owner's grant in `opened` would tell the member too (docs/design.md section 10.7): openings only here.
    await cloud.ctx.db
      .insertInto('notification_choices')
      .values({
        device_id: gate.deviceId,
        customer_id: member.id,
        tell: 'every',
        by_email: false,
        access_changes: false,
        updated_at: clock.now(),
      })
      .execute();
    const shared = await browserOf(member.id);
    const entry = await opened();

    expect((await deliver()).sent).toBe(3);
    await fanOutJournal(cloud.ctx);

    for (const browser of [phone, laptop, shared]) {
      expect(service.payloadsFor(browser).map((payload) => payload.entry)).toEqual([entry]);
    }
    await cloud.ctx.db.deleteFrom('barrier_members').execute();
  });
});

/** The company's secret, read from the key the gate's company holds. */
async function companyOf(keyRef: number): Promise<{ org_id: number; secret: string }> {
  const key = await cloud.ctx.db
    .selectFrom('keys')
    .select('company_id')
    .where('id', '=', keyRef)
    .executeTakeFirstOrThrow();
  const issued = await cloud.ops('POST', `/ops/companies/${key.company_id}/secret`);
  return { org_id: key.company_id, secret: issued.body.secret as string };
}

describe("the push service's answer", () => {
  it('404 or 410: the subscription is gone, and so is what it was still owed', async () => {
    const browser = await browserOf(ownerId);
    service.answer = () => 410;
    await opened();

    expect(await deliver()).toEqual({ sent: 0, gone: 1, failed: 0, gaveUp: 0 });

    const left = await cloud.ctx.db
      .selectFrom('push_subscriptions')
      .select('id')
      .where('id', '=', browser.id)
      .execute();
    expect(left).toEqual([]);
    expect(await outboxOf(browser.id)).toEqual([]);
  });

  it('500: retried after each delay of the schedule, not before, and sent once the service takes it', async () => {
    const browser = await browserOf(ownerId);
    service.answer = () => 500;
    await opened();

    expect(await deliver()).toMatchObject({ sent: 0, failed: 1 });
    expect(await deliver()).toMatchObject({ sent: 0, failed: 0 });
    clock.advance(PUSH_RETRY_DELAYS_MS[0]! - 1);
    expect(await deliver()).toMatchObject({ failed: 0 });
    clock.advance(1);
    expect(await deliver()).toMatchObject({ failed: 1 });
    service.answer = () => 201;
    clock.advance(PUSH_RETRY_DELAYS_MS[1]!);
    expect(await deliver()).toMatchObject({ sent: 1 });

    const [row] = await outboxOf(browser.id);
    expect(row).toMatchObject({ attempts: 3, last_error: 'the push service answered 500', gave_up_at: null });
    expect(service.payloadsFor(browser)).toHaveLength(3);
  });

  it('failing on: given up after its last retry, within the bounded time, and never tried again', async () => {
    const browser = await browserOf(ownerId);
    service.answer = () => 500;
    await opened();
    const start = clock.now().getTime();

    let gaveUp = 0;
    for (let turn = 0; turn < 20 && gaveUp === 0; turn += 1) {
      gaveUp += (await deliver()).gaveUp;
      clock.advance(PUSH_RETRY_DELAYS_MS[Math.min(turn, PUSH_RETRY_DELAYS_MS.length - 1)]!);
    }

    const [row] = await outboxOf(browser.id);
    expect(row?.gave_up_at).not.toBeNull();
    expect(row!.gave_up_at!.getTime() - start).toBeLessThanOrEqual(GIVE_UP_AFTER_MS);
    expect(row?.attempts).toBe(PUSH_RETRY_DELAYS_MS.length + 1);
    clock.advance(GIVE_UP_AFTER_MS);
    expect(await deliver()).toEqual({ sent: 0, gone: 0, failed: 0, gaveUp: 0 });
  });

  it('no answer within the timeout is a failed attempt, retried', async () => {
    const browser = await browserOf(ownerId);
    service.answer = () => 'hang';
    await opened();

    expect(await deliver({ timeoutMs: 200 })).toMatchObject({ failed: 1 });

    const [row] = await outboxOf(browser.id);
    expect(row?.last_error).toBe('no answer within 200 ms');
    expect(row?.sent_at).toBeNull();
  });
});

describe('workers', () => {
  it('two at once never send one row twice, and between them send every row', async () => {
    const browsers = await Promise.all(Array.from({ length: 6 }, () => browserOf(ownerId)));
    for (let i = 0; i < 4; i += 1) await opened();
    const options = { batchSize: 3, concurrency: 2 };

    const [a, b] = await Promise.all([deliver(options), deliver(options)]);

    expect(a.sent + b.sent).toBe(24);
    const told = service.received.map((push) => `${push.subscription}/${String(push.payload?.entry)}`);
    expect(new Set(told).size).toBe(24);
    expect(told).toHaveLength(24);
    for (const browser of browsers) expect(service.payloadsFor(browser)).toHaveLength(4);
  });

  it('one stopped mid-way gives its rows back, and the next sends them', async () => {
    const browser = await browserOf(ownerId);
    service.answer = () => 'hang';
    await opened();
    await opened();
    const stop = new AbortController();

    const running = deliver({ batchSize: 2, concurrency: 1 }, stop.signal);
    await waitFor(() => service.received.length === 1, 'the first push to reach the service');
    stop.abort();
    expect(await running).toEqual({ sent: 0, gone: 0, failed: 0, gaveUp: 0 });
    expect((await outboxOf(browser.id)).map((row) => row.locked_until)).toEqual([null, null]);

    service.answer = () => 201;
    expect((await deliver()).sent).toBe(2);
  });

  it('one that died holding rows leaves them to the others once its lease ends', async () => {
    const browser = await browserOf(ownerId);
    await opened();
    await fanOutJournal(cloud.ctx);
    const held = await claimPushes(cloud.ctx, { limit: 10, leaseMs: 30_000 });
    expect(held).toHaveLength(1);

    expect((await deliver()).sent).toBe(0);
    clock.advance(30_000);
    expect((await deliver()).sent).toBe(1);
    expect(service.payloadsFor(browser)).toHaveLength(1);
  });
});

describe('the fan-out', () => {
  it('waits at a gap in the journal ids until the entry after it is old enough, then reads past it', async () => {
    const browser = await browserOf(ownerId);
    // An id taken by an insert that has not committed yet, as another instance's opening would hold one.
    await sql`select nextval(pg_get_serial_sequence('journal', 'id'))`.execute(cloud.ctx.db);
    await opened();

    expect((await deliver()).sent).toBe(0);
    clock.advance(GAP_GRACE_MS);
    expect((await deliver()).sent).toBe(1);
    expect(service.payloadsFor(browser)).toHaveLength(1);
  });
});

describe('the running worker', () => {
  it('of another instance on the same database sends an opening made through this one', async () => {
    const other = await startTestCloud({
      database,
      clock,
      env: {
        GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1',
        // Instances share the VAPID key as they share the service key (cloud/README.md, "Configuration").
        VAPID_KEY_FILE: `${cloud.dataDir}/vapid-key.pem`,
      },
      pushDelivery: { pollMs: 20, timeoutMs: 5_000 },
    });
    try {
      const browser = await browserOf(ownerId);
      const entry = await opened();
      await waitFor(() => service.payloadsFor(browser).length === 1, 'the running worker to send the push');
      expect(service.payloadsFor(browser)[0]).toMatchObject({ entry, outcome: 'Opened' });
    } finally {
      await other.stop();
    }
  });
});
