import { randomUUID } from 'node:crypto';
import * as net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jsonb } from '../../cloud/foundation/db/database.js';
import { type DeliveryOptions, deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { saveCallbackKinds } from '../../cloud/rules/events/callback-kinds.js';
import { deliveryLog, endpointStates, eventRecord } from '../../cloud/rules/events/delivery-log.js';
import { purgeEvents, resendEvent, retryNow } from '../../cloud/rules/events/delivery-store.js';
import { removeEndpoint } from '../../cloud/rules/events/endpoints.js';
import { heldEvents } from '../../cloud/rules/events/held-events.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import {
  FAILURE_PAUSE_MS,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  RETRY_WINDOW_MS,
} from '../../cloud/rules/events/retry-schedule.js';
import type { ActingMember } from '../../cloud/rules/member-actions/member-actions.js';
import { EVENT_EXAMPLES, type EventKind } from '../../shared/company-api/events.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  callbackCompany,
  endpointRow,
  enqueuePings,
  firstEndpointOf,
  outbox,
  setCallback,
} from '../support/event-company.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Delivering events to a company's callback address (docs/design.md section 6), driven by hand with
 * `deliverDue` and a fake clock: the signature a receiver checks with OpenSSL, a company's order, the retry
 * schedule to a failing endpoint and back, a receiver that hangs, and the address rules at every attempt.
 */

const DAY = 24 * 3600_000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
/**
 * Loopback receivers, and no jitter: each retry comes exactly at its scheduled delay. The attempt's deadline is
 * real time and generous, so that a receiver that does answer is never cut off on a busy machine.
 */
const LOCAL: Partial<DeliveryOptions> = { allowPrivateAddresses: true, timeoutMs: 10_000, random: () => 0.5 };
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let other: WebhookReceiver;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  const key = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  other = new WebhookReceiver();
  await receiver.start(key);
  await other.start(key);
});

afterEach(async () => {
  // Each test's companies stop receiving, so that what one left undelivered never reaches the next one's tally.
  await cloud.ctx.db.deleteFrom('endpoints').execute();
  receiver.answer = () => ({ status: 204 });
  receiver.received.length = 0;
  other.received.length = 0;
});

afterAll(async () => {
  await receiver?.stop();
  await other?.stop();
  await cloud?.stop();
  await database?.close();
});

const deliver = (options: Partial<DeliveryOptions> = {}) => deliverDue(cloud.ctx, { ...LOCAL, ...options });

describe('a delivery', () => {
  it('is the body of docs/design.md section 6, signed in the Standard Webhooks form with the published key', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Signed Ltd', receiver.url);
    await enqueuePings(cloud.ctx, companyId);
    const [event] = await outbox(cloud.ctx, companyId);

    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.verified).toBe(true);
    expect(got.signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(got.id).toBe(event!.id);
    expect(got.timestamp).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(got.headers['content-type']).toBe('application/json');
    expect(Object.keys(JSON.parse(got.body))).toEqual(['type', 'id', 'at', 'data']);
    expect(got.event).toMatchObject({ type: 'ping', id: event!.id });
    expect(got.event.at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const [after] = await outbox(cloud.ctx, companyId);
    expect(after!.delivered_at).not.toBeNull();
    const [logged] = await deliveryLog(cloud.ctx, companyId);
    expect(logged).toMatchObject({ eventId: event!.id, attempt: 1, outcome: 'delivered', status: 204 });
  });

  it('a test event goes ahead of the events waiting, which then follow in the order they were written', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Backlog Ltd', receiver.url);
    const waiting = ['request.claimed', 'request.expired', 'key.expired'];
    for (const type of waiting) {
      await cloud.ctx.db
        .insertInto('events')
        .values({ id: randomUUID(), company_id: companyId, type, data: jsonb({}), at: clock.now() })
        .execute();
    }
    await enqueuePings(cloud.ctx, companyId);
    expect(await deliver()).toEqual({ delivered: 4, failed: 0 });
    expect(receiver.received.map((got) => got.event.type)).toEqual(['ping', ...waiting]);
  });

  it('a signature over another body, id or timestamp does not verify', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Tamper Ltd', receiver.url);
    await enqueuePings(cloud.ctx, companyId);
    await deliver();
    const got = receiver.received[0]!;
    const { createPublicKey, verify } = await import('node:crypto');
    const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
    const x = Buffer.from((JSON.parse(published.body) as { key: string }).key, 'base64').toString(
      'base64url',
    );
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    const signature = Buffer.from(got.signature.slice(4), 'base64');
    const check = (content: string) => verify(null, Buffer.from(content), key, signature);
    expect(check(`${got.id}.${got.timestamp}.${got.body}`)).toBe(true);
    expect(check(`${got.id}.${got.timestamp + 1}.${got.body}`)).toBe(false);
    expect(check(`${got.id}.${got.timestamp}.${got.body.replace('ping', 'pong')}`)).toBe(false);
  });

  it('goes to companies with a callback address only; the others keep their events for the retry window', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'No Address Ltd', null);
    await enqueuePings(cloud.ctx, companyId, 2);
    expect(await deliver()).toEqual({ delivered: 0, failed: 0 });
    expect(await outbox(cloud.ctx, companyId)).toHaveLength(2);
  });
});

describe('the kinds a callback takes', () => {
  let member: ActingMember;
  beforeAll(async () => {
    const customer = await createCustomer(cloud.ctx, { displayName: 'Ann' });
    member = { customerId: customer.id, name: 'Ann <ann@example.com>' };
  });
  const write = (companyId: number, type: EventKind) =>
    cloud.ctx.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        companyId,
        type,
        at: clock.now(),
        data: EVENT_EXAMPLES[type].data as never,
      }),
    );
  const sent = () => receiver.received.map((got) => got.event.type);

  it('are every kind until the company chooses; then only those chosen, and test events, are sent', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Kinds Ltd', receiver.url);
    await write(companyId, 'request.issued');
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });

    const endpoint = await firstEndpointOf(cloud.ctx, companyId);
    await saveCallbackKinds(cloud.ctx, endpoint, ['open.succeeded', 'open.failed'], member);
    const skipped = await write(companyId, 'request.revoked');
    await write(companyId, 'open.succeeded');
    await enqueuePings(cloud.ctx, companyId);
    expect(await deliver()).toEqual({ delivered: 2, failed: 0 });
    expect(sent()).toEqual(['request.issued', 'ping', 'open.succeeded']);

    // Not sent, nor waiting: the endpoint has nothing on the way, the event's page says why.
    expect(await endpointStates(cloud.ctx, companyId)).toMatchObject([
      { kinds: ['open.succeeded', 'open.failed'], waiting: 0 },
    ]);
    expect(await eventRecord(cloud.ctx, companyId, skipped)).toMatchObject({
      endpoints: [{ sent: false, deliveredAt: null, nextAttemptAt: null }],
    });
    expect(await deliver()).toEqual({ delivered: 0, failed: 0 });
  });

  it('taken again later, never sends the events passed over meanwhile, days late', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Fickle Ltd', receiver.url);
    const endpoint = await firstEndpointOf(cloud.ctx, companyId);
    await saveCallbackKinds(cloud.ctx, endpoint, ['open.succeeded'], member);
    await write(companyId, 'request.revoked');
    await write(companyId, 'open.failed');
    await write(companyId, 'open.succeeded');
    expect(await endpointStates(cloud.ctx, companyId)).toMatchObject([{ waiting: 1 }]);

    // Dropping a kind passes over its waiting events too: 'open.succeeded' is waiting, and no longer taken.
    expect(await saveCallbackKinds(cloud.ctx, endpoint, ['open.failed'], member)).toBe(1);
    expect(await saveCallbackKinds(cloud.ctx, endpoint, null, member)).toBe(0);
    const after = await write(companyId, 'request.revoked');

    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(receiver.received.map((got) => got.id)).toEqual([after]);
    // Not taken by its one endpoint, an event is not held for a later first endpoint either; one still
    // waiting there when it goes is.
    receiver.answer = () => ({ status: 503 });
    const waiting = await write(companyId, 'open.failed');
    await deliver();
    await write(companyId, 'key.expired');
    expect(await saveCallbackKinds(cloud.ctx, endpoint, ['open.failed'], member)).toBe(1);
    await write(companyId, 'request.revoked');
    await removeEndpoint(cloud.ctx, companyId, endpoint.endpointId, member);
    expect(await heldEvents(cloud.ctx, companyId)).toMatchObject({ count: 1 });
    receiver.answer = () => ({ status: 204 });
    await setCallback(cloud.ctx, companyId, receiver.url);
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(receiver.received.at(-1)!.id).toBe(waiting);
  });

  it('do not hold back an event a member asks to have sent: that one goes, whatever its kind', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Anyway Ltd', receiver.url);
    const endpoint = await firstEndpointOf(cloud.ctx, companyId);
    await saveCallbackKinds(cloud.ctx, endpoint, ['open.failed'], member);
    const skipped = await write(companyId, 'key.expired');
    expect(await deliver()).toEqual({ delivered: 0, failed: 0 });

    expect(await resendEvent(cloud.ctx, endpoint, skipped, member)).toBe('resent');
    // Asked for by name, a later change of kinds leaves it on its way.
    expect(await saveCallbackKinds(cloud.ctx, endpoint, ['open.succeeded'], member)).toBe(0);
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(sent()).toEqual(['key.expired']);
    expect(await eventRecord(cloud.ctx, companyId, skipped)).toMatchObject({
      endpoints: [{ sent: true, deliveredAt: clock.now() }],
    });
  });
});

describe("a company's order", () => {
  it('sends its events one after another, and an event that failed its first attempt no longer holds the later ones', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Order Ltd', receiver.url);
    await enqueuePings(cloud.ctx, companyId, 3);
    const [first, second, third] = await outbox(cloud.ctx, companyId);
    receiver.answer = (event) => ({ status: event.id === first!.id ? 500 : 204 });

    expect(await deliver()).toEqual({ delivered: 0, failed: 1 });
    expect(receiver.received.map((r) => r.id)).toEqual([first!.id]);

    clock.advance(FAILURE_PAUSE_MS);
    await deliver();
    // The first one's retry was due too, and failed again; the pause after it holds the company.
    expect(receiver.received.map((r) => r.id)).toEqual([first!.id, first!.id]);

    clock.advance(FAILURE_PAUSE_MS);
    expect(await deliver()).toEqual({ delivered: 2, failed: 0 });
    expect(receiver.received.map((r) => r.id)).toEqual([first!.id, first!.id, second!.id, third!.id]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  });
});

describe('retries', () => {
  /** Fails every attempt of the company's one event through the whole schedule. */
  async function failThroughSchedule(companyId: number): Promise<void> {
    receiver.answer = () => ({ status: 503 });
    await enqueuePings(cloud.ctx, companyId);
    expect(await deliver()).toEqual({ delivered: 0, failed: 1 });
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      expect(await deliver()).toEqual({ delivered: 0, failed: 1 });
    }
  }

  it('follow the schedule over about three days, then the endpoint is failing and nothing more is sent', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Down Ltd', receiver.url);
    const start = clock.now().getTime();
    await failThroughSchedule(companyId);

    expect(receiver.received).toHaveLength(MAX_ATTEMPTS);
    expect(RETRY_WINDOW_MS).toBeGreaterThan(3 * DAY);
    expect(RETRY_WINDOW_MS).toBeLessThan(3.5 * DAY);
    const times = receiver.received.map((r) => r.timestamp * 1000 - start);
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual([...RETRY_DELAYS_MS]);
    const log = await deliveryLog(cloud.ctx, companyId);
    expect(log.map((row) => row.attempt)).toEqual(
      Array.from({ length: MAX_ATTEMPTS }, (_, i) => MAX_ATTEMPTS - i),
    );
    expect(log[0]).toMatchObject({ outcome: 'failing', status: 503, nextAttemptAt: null });
    expect(log[1]).toMatchObject({ outcome: 'retry', status: 503 });
    const [state] = await endpointStates(cloud.ctx, companyId);
    expect(state!.failingSince).toEqual(clock.now());
    expect(state!.lastError).toMatch(/answered 503/);

    receiver.answer = () => ({ status: 204 });
    await enqueuePings(cloud.ctx, companyId);
    clock.advance(7 * DAY);
    expect(await deliver()).toEqual({ delivered: 0, failed: 0 });
    expect(receiver.received).toHaveLength(MAX_ATTEMPTS);

    // The company asks for a retry: the schedule begins again from its first delay, and the log goes on
    // counting the attempts rather than numbering the next one 1 again.
    receiver.answer = () => ({ status: 503 });
    expect(await retryNow(cloud.ctx, await firstEndpointOf(cloud.ctx, companyId))).toBe(2);
    expect(await deliver()).toEqual({ delivered: 0, failed: 1 });
    const [again] = await deliveryLog(cloud.ctx, companyId);
    expect(again).toMatchObject({ attempt: MAX_ATTEMPTS + 1, outcome: 'retry' });
    expect(again!.nextAttemptAt).toEqual(new Date(clock.now().getTime() + RETRY_DELAYS_MS[0]!));

    // Everything held goes, in order, and the endpoint is well again.
    receiver.answer = () => ({ status: 204 });
    clock.advance(RETRY_DELAYS_MS[0]!);
    expect(await deliver()).toEqual({ delivered: 2, failed: 0 });
    const events = await outbox(cloud.ctx, companyId);
    expect(receiver.received.slice(MAX_ATTEMPTS + 1).map((r) => r.id)).toEqual(events.map((e) => e.id));
    expect((await deliveryLog(cloud.ctx, companyId)).slice(0, 2).map((row) => row.attempt)).toEqual([
      1,
      MAX_ATTEMPTS + 2,
    ]);
    expect((await endpointStates(cloud.ctx, companyId))[0]!.failingSince).toBeNull();
  });

  it('resume when the company changes its callback address', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Moved Ltd', receiver.url);
    await failThroughSchedule(companyId);
    expect((await endpointRow(cloud.ctx, companyId)).callback_failing_since).not.toBeNull();

    await setCallback(cloud.ctx, companyId, other.url);
    expect((await endpointStates(cloud.ctx, companyId))[0]!.failingSince).toBeNull();
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(other.received).toHaveLength(1);
    expect(other.received[0]!.verified).toBe(true);
    expect(await endpointRow(cloud.ctx, companyId)).toMatchObject({
      callback_failing_since: null,
      callback_failing_url: null,
    });
  });

  it('an attempt that gets no answer within the timeout fails, and is tried again', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Hanging Ltd', receiver.url);
    receiver.answer = () => 'hang';
    await enqueuePings(cloud.ctx, companyId);
    // A short deadline only where nothing answers: the deadline is then the one way the attempt can end, so a
    // slow machine makes the test wait longer, never fail.
    expect(await deliver({ timeoutMs: 150 })).toEqual({ delivered: 0, failed: 1 });
    const [logged] = await deliveryLog(cloud.ctx, companyId);
    expect(logged).toMatchObject({ outcome: 'retry', status: null, error: 'no answer within 150 ms' });

    receiver.answer = () => ({ status: 200 });
    clock.advance(RETRY_DELAYS_MS[0]!);
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
  });
});

describe('callback addresses at delivery', () => {
  it('[attack:events.callback-private-address] a name resolving to loopback is refused, checked at every attempt', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Rebind Ltd', 'https://hooks.rebind.example/events');
    await enqueuePings(cloud.ctx, companyId);
    const loopback = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(await deliver({ allowPrivateAddresses: false, resolve: loopback })).toEqual({
      delivered: 0,
      failed: 1,
    });
    const [logged] = await deliveryLog(cloud.ctx, companyId);
    expect(logged!.error).toBe(
      'refused to connect: hooks.rebind.example is not a public address (127.0.0.1)',
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('[attack:events.callback-private-address] a connection that lands on loopback is refused before anything is sent', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Landing Ltd', 'https://hooks.landing.example/events');
    await enqueuePings(cloud.ctx, companyId);
    const publicAnswer = async () => [{ address: '93.184.215.14', family: 4 }];
    // Whatever the name said, the socket reaches the receiver on loopback: the address connected to is refused.
    const toLoopback = (options: net.TcpNetConnectOpts) =>
      net.connect({ ...options, host: '127.0.0.1', port: receiver.port, lookup: undefined });
    await deliver({ allowPrivateAddresses: false, resolve: publicAnswer, connect: toLoopback });
    const [logged] = await deliveryLog(cloud.ctx, companyId);
    expect(logged!.error).toBe(
      'refused to connect: hooks.landing.example is not a public address (127.0.0.1)',
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('[attack:events.callback-private-address] plain http and IP literals of private ranges are refused', async () => {
    const plain = await callbackCompany(cloud.ctx, 'Plain Ltd', receiver.url);
    const literal = await callbackCompany(cloud.ctx, 'Literal Ltd', 'https://10.1.2.3/events');
    await enqueuePings(cloud.ctx, plain);
    await enqueuePings(cloud.ctx, literal);
    await deliver({ allowPrivateAddresses: false });
    expect((await deliveryLog(cloud.ctx, plain))[0]!.error).toBe('the callback address is not https');
    expect((await deliveryLog(cloud.ctx, literal))[0]!.error).toBe(
      'refused to connect: 10.1.2.3 is not a public address (10.1.2.3)',
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('[attack:events.callback-redirect] a redirect is a failed attempt, never followed', async () => {
    const companyId = await callbackCompany(cloud.ctx, 'Redirect Ltd', receiver.url);
    receiver.answer = () => ({ status: 307, headers: { location: other.url } });
    await enqueuePings(cloud.ctx, companyId);
    expect(await deliver()).toEqual({ delivered: 0, failed: 1 });
    const [logged] = await deliveryLog(cloud.ctx, companyId);
    expect(logged).toMatchObject({ outcome: 'retry', status: 307 });
    expect(logged!.error).toMatch(/callbacks do not follow redirects/);
    expect(other.received).toHaveLength(0);
  });
});

describe('outbox hygiene', () => {
  it('removes events 30 days old, and undelivered events of a company without an address after the retry window', async () => {
    const start = clock.now().getTime();
    const addressed = await callbackCompany(cloud.ctx, 'Kept Ltd', receiver.url);
    const unaddressed = await callbackCompany(cloud.ctx, 'Silent Ltd', null);
    await enqueuePings(cloud.ctx, addressed);
    await enqueuePings(cloud.ctx, unaddressed);
    await deliver();

    clock.set(new Date(start + RETRY_WINDOW_MS - 60_000));
    await purgeEvents(cloud.ctx, RETRY_WINDOW_MS);
    expect(await outbox(cloud.ctx, unaddressed)).toHaveLength(1);
    clock.set(new Date(start + RETRY_WINDOW_MS + 60_000));
    await purgeEvents(cloud.ctx, RETRY_WINDOW_MS);
    expect(await outbox(cloud.ctx, unaddressed)).toHaveLength(0);
    expect(await outbox(cloud.ctx, addressed)).toHaveLength(1);

    clock.set(new Date(start + 30 * DAY + 60_000));
    await purgeEvents(cloud.ctx, RETRY_WINDOW_MS);
    expect(await outbox(cloud.ctx, addressed)).toHaveLength(0);
    expect(await deliveryLog(cloud.ctx, addressed)).toHaveLength(0);
  });
});
