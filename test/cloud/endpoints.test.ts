import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryOptions, deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { createCompany } from '../../cloud/rules/companies/companies.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { saveCallbackKinds } from '../../cloud/rules/events/callback-kinds.js';
import { deliveryLog, endpointStates } from '../../cloud/rules/events/delivery-log.js';
import { resendEvent, retryNow } from '../../cloud/rules/events/delivery-store.js';
import {
  addEndpoint,
  listEndpoints,
  MAX_ENDPOINTS,
  removeEndpoint,
} from '../../cloud/rules/events/endpoints.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { MAX_ATTEMPTS } from '../../cloud/rules/events/retry-schedule.js';
import type { ActingMember } from '../../cloud/rules/member-actions/member-actions.js';
import { EVENT_EXAMPLES, type EventKind } from '../../shared/company-api/events.js';
import { ApiError } from '../../shared/errors.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings } from '../support/event-company.js';
import { standardVerifier } from '../support/standard-webhooks.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Several endpoints per company (docs/design.md section 6.2), driven by hand with `deliverDue` and a fake
 * clock: each endpoint gets the kinds it takes, signed with its own secrets; one that fails holds up only its
 * own events; a resend, "Retry now" and a removal touch one endpoint; and the company's row keeps the first
 * endpoint for a previous release, whose own writes reach the endpoints.
 */

const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const LOCAL: Partial<DeliveryOptions> = { allowPrivateAddresses: true, timeoutMs: 10_000, random: () => 0.5 };
let database: TestDatabase;
let cloud: TestCloud;
let billing: WebhookReceiver;
let gates: WebhookReceiver;
let member: ActingMember;
const verify = standardVerifier(clock);

beforeAll(async () => {
  database = await createTestDatabase();
  // Endpoints on loopback over plain http, as the address rules allow in development only.
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  const key = (JSON.parse(published.body) as { key: string }).key;
  billing = new WebhookReceiver();
  gates = new WebhookReceiver();
  await billing.start(key);
  await gates.start(key);
  const customer = await createCustomer(cloud.ctx, { displayName: 'Ann', email: 'ann@example.com' });
  member = { customerId: customer.id, name: 'Ann <ann@example.com>' };
});

afterEach(async () => {
  await cloud.ctx.db.deleteFrom('endpoints').execute();
  for (const receiver of [billing, gates]) {
    receiver.answer = () => ({ status: 204 });
    receiver.received.length = 0;
  }
});

afterAll(async () => {
  await billing?.stop();
  await gates?.stop();
  await cloud?.stop();
  await database?.close();
});

const deliver = () => deliverDue(cloud.ctx, LOCAL);
const write = (companyId: number, type: EventKind) =>
  cloud.ctx.db
    .transaction()
    .execute((trx) =>
      enqueueEvent(trx, { companyId, type, at: clock.now(), data: EVENT_EXAMPLES[type].data as never }),
    );
const kinds = (receiver: WebhookReceiver) => receiver.received.map((got) => got.event.type);

/** A company with an endpoint at each receiver: billing takes openings only, gates every kind. */
async function twoEndpoints(name: string) {
  const company = await createCompany(cloud.ctx, { name });
  const first = await addEndpoint(cloud.ctx, company.id, billing.url, { by: member });
  const second = await addEndpoint(cloud.ctx, company.id, gates.url, { by: member });
  const billingEndpoint = { companyId: company.id, endpointId: first.endpoint.id };
  const gatesEndpoint = { companyId: company.id, endpointId: second.endpoint.id };
  await saveCallbackKinds(cloud.ctx, billingEndpoint, ['open.succeeded'], member);
  return {
    companyId: company.id,
    billing: { ...billingEndpoint, secret: first.signingSecret },
    gates: { ...gatesEndpoint, secret: second.signingSecret },
  };
}

describe('several endpoints of one company', () => {
  it('each gets the kinds it takes, and a test event, signed with its own secret and no other', async () => {
    const { companyId, billing: b, gates: g } = await twoEndpoints('Two Receivers Ltd');
    await write(companyId, 'request.issued');
    await write(companyId, 'open.succeeded');
    await enqueuePings(cloud.ctx, companyId);
    expect(await deliver()).toEqual({ delivered: 5, failed: 0 });

    expect(kinds(billing)).toEqual(['ping', 'open.succeeded']);
    expect(kinds(gates)).toEqual(['ping', 'request.issued', 'open.succeeded']);
    for (const got of billing.received) {
      expect(got.verified).toBe(true);
      expect(verify(b.secret, got)).toEqual(got.event);
      expect(() => verify(g.secret, got)).toThrow();
    }
    for (const got of gates.received) {
      expect(verify(g.secret, got)).toEqual(got.event);
      expect(() => verify(b.secret, got)).toThrow();
    }
    // One event, delivered to both: the same id and body at each.
    const opened = (receiver: WebhookReceiver) =>
      receiver.received.find((got) => got.event.type === 'open.succeeded')!;
    expect(opened(billing).id).toBe(opened(gates).id);
    expect(opened(billing).body).toBe(opened(gates).body);

    // Each endpoint has its own log; the company's log has both.
    expect(
      (await deliveryLog(cloud.ctx, companyId, { endpoint: b.endpointId })).map((row) => row.url),
    ).toEqual([billing.url, billing.url]);
    expect(await deliveryLog(cloud.ctx, companyId)).toHaveLength(5);
  });

  it('one that fails holds up only its own events, and fails on its own; the other goes on', async () => {
    const { companyId, billing: b } = await twoEndpoints('One Down Ltd');
    billing.answer = () => ({ status: 503 });
    await write(companyId, 'open.succeeded');
    for (let hours = 0; hours < 4 * 24; hours += 3) {
      await deliver();
      clock.advance(3 * 3600_000);
    }
    expect(billing.received).toHaveLength(MAX_ATTEMPTS);
    await write(companyId, 'open.succeeded');
    await deliver();
    expect(kinds(gates)).toEqual(['open.succeeded', 'open.succeeded']);
    const [failing, working] = await endpointStates(cloud.ctx, companyId);
    expect(failing).toMatchObject({ url: billing.url, waiting: 2, retrying: 1 });
    expect(failing!.failingSince).not.toBeNull();
    expect(working).toMatchObject({ url: gates.url, waiting: 0, failingSince: null });

    // The members hear of the failing endpoint, by its address.
    const mails = await cloud.ctx.db
      .selectFrom('company_mails')
      .select(['kind', 'endpoint_id'])
      .where('company_id', '=', companyId)
      .execute();
    expect(mails.every((mail) => mail.kind === 'endpoint_failing' && mail.endpoint_id === b.endpointId)).toBe(
      true,
    );

    // "Retry now" on it sends both, in order, and leaves the other endpoint alone.
    billing.answer = () => ({ status: 204 });
    expect(await retryNow(cloud.ctx, b, member)).toBe(2);
    expect(await deliver()).toEqual({ delivered: 2, failed: 0 });
    expect(gates.received).toHaveLength(2);
  });

  it('a resend goes to the endpoint asked, with the same webhook-id, and nowhere else', async () => {
    const { companyId, billing: b, gates: g } = await twoEndpoints('Resend Ltd');
    const id = await write(companyId, 'open.succeeded');
    await deliver();
    expect(await resendEvent(cloud.ctx, g, id, member)).toBe('resent');
    expect(await resendEvent(cloud.ctx, g, id, member)).toBe('waiting');
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(gates.received.map((got) => got.headers['webhook-id'])).toEqual([id, id]);
    expect(billing.received).toHaveLength(1);

    // Another company's endpoint, or this company's event at another's endpoint, is unknown.
    const other = await twoEndpoints('Other Ltd');
    expect(await resendEvent(cloud.ctx, { companyId, endpointId: other.gates.endpointId }, id, member)).toBe(
      'unknown',
    );
    expect(await resendEvent(cloud.ctx, other.billing, id, member)).toBe('unknown');
    expect(await retryNow(cloud.ctx, { companyId, endpointId: other.gates.endpointId }, member)).toBeNull();
    expect(b.endpointId).not.toBe(g.endpointId);
  });

  it('removing one keeps the events and the other endpoint; a company has one per address, ten at most', async () => {
    const { companyId, billing: b } = await twoEndpoints('Ten Ltd');
    await write(companyId, 'open.succeeded');
    expect(await removeEndpoint(cloud.ctx, companyId, b.endpointId, member)).toBe(billing.url);
    expect(await deliver()).toEqual({ delivered: 1, failed: 0 });
    expect(billing.received).toHaveLength(0);
    expect(await removeEndpoint(cloud.ctx, companyId, b.endpointId, member)).toBeNull();

    // The same address sent twice at once (a double click): one endpoint, one secret.
    const twice = await Promise.allSettled([
      addEndpoint(cloud.ctx, companyId, `${gates.url}/twice`),
      addEndpoint(cloud.ctx, companyId, `${gates.url}/twice`),
    ]);
    expect(twice.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const second = twice.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect((second.reason as ApiError).code).toBe('endpoint_exists');

    for (let i = (await listEndpoints(cloud.ctx.db, companyId)).length; i < MAX_ENDPOINTS; i++) {
      await addEndpoint(cloud.ctx, companyId, `${gates.url}/${i}`);
    }
    const refused = await addEndpoint(cloud.ctx, companyId, `${gates.url}/more`).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('too_many_endpoints');
    expect(await listEndpoints(cloud.ctx.db, companyId)).toHaveLength(MAX_ENDPOINTS);
  });
});

describe('beside a previous release', () => {
  it("keeps the company's row as its first endpoint, and carries that release's own writes to the endpoints", async () => {
    const { companyId, billing: b, gates: g } = await twoEndpoints('Upgrade Ltd');
    const row = () =>
      cloud.ctx.db
        .selectFrom('companies')
        .select(['callback_url', 'callback_kinds'])
        .where('id', '=', companyId)
        .executeTakeFirstOrThrow();
    expect(await row()).toEqual({ callback_url: billing.url, callback_kinds: ['open.succeeded'] });
    await removeEndpoint(cloud.ctx, companyId, b.endpointId);
    expect(await row()).toEqual({ callback_url: gates.url, callback_kinds: null });

    // The previous release saves an address and kinds on the company's row, and a secret without an endpoint.
    await cloud.ctx.db
      .updateTable('companies')
      .set({ callback_url: `${gates.url}/moved`, callback_kinds: ['open.failed'] })
      .where('id', '=', companyId)
      .execute();
    expect(await listEndpoints(cloud.ctx.db, companyId)).toMatchObject([
      { id: g.endpointId, url: `${gates.url}/moved`, kinds: ['open.failed'] },
    ]);
    const secret = await cloud.ctx.db
      .insertInto('callback_secrets')
      .values({ company_id: companyId, sealed: 'sealed', hint: 'hint' })
      .returning('endpoint_id')
      .executeTakeFirstOrThrow();
    expect(secret.endpoint_id).toBe(g.endpointId);
    // Its removal of the address removes the endpoint; its first address makes one.
    await cloud.ctx.db
      .updateTable('companies')
      .set({ callback_url: null })
      .where('id', '=', companyId)
      .execute();
    expect(await listEndpoints(cloud.ctx.db, companyId)).toEqual([]);
    await cloud.ctx.db
      .updateTable('companies')
      .set({ callback_url: gates.url })
      .where('id', '=', companyId)
      .execute();
    // With the kinds that release keeps on the row.
    expect(await listEndpoints(cloud.ctx.db, companyId)).toMatchObject([
      { url: gates.url, kinds: ['open.failed'] },
    ]);
  });
});
