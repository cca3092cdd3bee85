import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../cloud/faces/api-contract/openapi-document.js';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { declineRequest } from '../../cloud/rules/requests/decline.js';
import type { Action } from '../../shared/company-api/calls.js';
import { EVENT_KINDS } from '../../shared/company-api/events.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier, type SecretAuth } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FakeDevice, insertDevice } from '../support/fake-device.js';
import { DocumentValidator } from './document-validator.js';

/**
 * The contract as the cloud serves it (docs/design.md section 1.1; cloud/README.md, "The contract as OpenAPI"):
 * `GET /api/openapi.json` and `GET /api/reference`, public and cacheable, and the answers of a running cloud,
 * successes and refusals alike, valid by the document's response schemas for their action and status.
 */
const RATE_LIMIT = 2;
let database: TestDatabase;
let cloud: TestCloud;
let validator: DocumentValidator;
let company: SecretAuth;
let customerId: number;
let device: FakeDevice | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { OPEN_RATE_LIMIT: String(RATE_LIMIT) } });
  validator = new DocumentValidator(openApiDocument(cloud.baseUrl));
  company = await secretCompany(cloud, 'Contract Couriers Ltd');
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Olga Owner' })).id;
});

afterAll(async () => {
  await device?.client.endAsync();
  await cloud?.stop();
  await database?.close();
});

/** The answer is one the document lists for the action, valid by its schema, with X-Request-Id. */
function expectDocumented(action: Action, answer: Answer): void {
  const check = validator.answer(action, answer.status);
  expect(check, `${action} answered ${answer.status}, which the document does not list`).toBeDefined();
  expect(
    check!(answer.body),
    `${action} ${answer.status} ${JSON.stringify(answer.body)}: ${JSON.stringify(check!.errors)}`,
  ).toBe(true);
  expect(answer.headers['x-request-id']).toEqual(expect.any(String));
}

/** A key the customer granted the company on a new barrier's objects, from a request made through the API. */
async function grantedKey(deviceId: string, objectIds: number[]): Promise<{ code: string; keyRef: number }> {
  const created = await cloud.call('request', { ...company, ref: 'ORD-1042' });
  const code = created.body.code as string;
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId,
    objectIds,
    keyExpiresAt: null,
  });
  return { code, keyRef };
}

/** A paired barrier whose controller is connected and answers each command as `answer` says. */
async function connectedBarrier(): Promise<{ deviceId: string; objectId: number }> {
  const account = await insertDevice(cloud.ctx.db);
  await cloud.controllerLink.addDevice(account.id, account.password);
  const now = cloud.ctx.clock.now();
  await cloud.ctx.db
    .updateTable('devices')
    .set({ customer_id: customerId, paired_at: now, name: 'Yard gate' })
    .where('id', '=', account.id)
    .execute();
  const object = await cloud.ctx.db
    .insertInto('device_objects')
    .values({ device_id: account.id, local_id: 'gate', label: 'Main gate', kind: 'relay' })
    .returning('id')
    .executeTakeFirstOrThrow();
  device = await FakeDevice.connect(cloud.controllerLink.deviceUrl, account, {
    prefix: cloud.ctx.config.topicPrefix,
    cloudKey: cloud.ctx.serviceKey.publicKey,
  });
  await expect
    .poll(async () => {
      const row = await cloud.ctx.db
        .selectFrom('devices')
        .select('online')
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      return row.online;
    })
    .toBe(true);
  return { deviceId: account.id, objectId: object.id };
}

describe('the served contract', () => {
  it('serves the document at /api/openapi.json to anyone, as cacheable JSON', async () => {
    const answer = await cloud.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['cache-control']).toBe('public, max-age=3600');
    expect(answer.headers['x-request-id']).toEqual(expect.any(String));
    expect(answer.json()).toEqual(openApiDocument(cloud.baseUrl));
    expect(answer.json().servers).toEqual([{ url: cloud.baseUrl, description: 'This Gatelink cloud' }]);
  });

  it('serves the reference page at /api/reference under the pages’ Content-Security-Policy', async () => {
    const answer = await cloud.app.inject({ method: 'GET', url: '/api/reference' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    const policy = String(answer.headers['content-security-policy']);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("style-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    for (const action of ['request', 'status', 'open']) {
      expect(answer.body).toContain(`POST /api/company.php?a=${action}`);
    }
    for (const kind of EVENT_KINDS) expect(answer.body).toContain(`id="event-${kind}"`);
    expect(answer.body).toContain('2xx status within 10 s');
    expect(answer.body).not.toMatch(/<script>|<style|style="/);
  });
});

describe("a running cloud's answers are the document's", () => {
  it('request and status, from new to issued and revoked', async () => {
    const created = await cloud.call('request', { ...company, ref: 'ORD-1', ttl_hours: 48 });
    expect(created.status).toBe(200);
    expectDocumented('request', created);
    const code = created.body.code as string;
    const fresh = await cloud.call('status', { ...company, code });
    expect(fresh.body.state).toBe('new');
    expectDocumented('status', fresh);

    const barrier = await insertBarrier(cloud, customerId);
    await claimRequest(cloud.ctx, { code, customerId });
    expectDocumented('status', await cloud.call('status', { ...company, code }));
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: barrier.deviceId,
      objectIds: [barrier.objects[0]!.number_id],
      keyExpiresAt: new Date(Date.now() + 86_400_000),
    });
    const issued = await cloud.call('status', { ...company, code });
    expect(issued.body).toMatchObject({ state: 'issued', key_ref: keyRef });
    expectDocumented('status', issued);
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    const revoked = await cloud.call('status', { ...company, code });
    expect(revoked.body.state).toBe('revoked');
    expectDocumented('status', revoked);
  });

  it('status of a request the customer declined', async () => {
    const code = (await cloud.call('request', { ...company, ref: 'ORD-NO' })).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    await declineRequest(cloud.ctx, { code, customerId });
    const declined = await cloud.call('status', { ...company, code });
    expect(declined.body).toMatchObject({ state: 'declined', declined_at: expect.any(String) });
    expectDocumented('status', declined);
  });

  it('open: opened, refused by the controller, offline, refused by its checks, rate limited', async () => {
    const { deviceId, objectId } = await connectedBarrier();
    const { keyRef } = await grantedKey(deviceId, [objectId]);
    const body = { ...company, key_ref: keyRef, number_id: objectId, actor: 'Anna, shift B' };

    const acked = device!.nextCommand().then((command) => device!.ack(command));
    const opened = await cloud.call('open', body);
    await acked;
    expect(opened.body).toEqual({ ok: 1, id: expect.any(Number) });
    expectDocumented('open', opened);

    const failed = device!
      .nextCommand()
      .then((command) => device!.ack(command, 'failed', { reason: 'no_carrier' }));
    const fault = await cloud.call('open', body);
    await failed;
    expect(fault.body).toMatchObject({ error: 'device_error', detail: 'no_carrier' });
    expectDocumented('open', fault);

    const limited = await cloud.call('open', body);
    expect(limited.status).toBe(429);
    expectDocumented('open', limited);

    const offline = await insertBarrier(cloud, customerId, { online: false });
    const other = await grantedKey(offline.deviceId, [offline.objects[0]!.number_id]);
    const unreachable = await cloud.call('open', {
      ...body,
      key_ref: other.keyRef,
      number_id: offline.objects[0]!.number_id,
    });
    expect(unreachable.body.error).toBe('device_offline');
    expectDocumented('open', unreachable);
    const notInKey = await cloud.call('open', { ...body, key_ref: other.keyRef, number_id: objectId });
    expect(notInKey.body.error).toBe('forbidden');
    expectDocumented('open', notInKey);
    await revokeAccessKey(cloud.ctx, { keyRef: other.keyRef, customerId });
    const withdrawn = await cloud.call('open', {
      ...body,
      key_ref: other.keyRef,
      number_id: offline.objects[0]!.number_id,
    });
    expect(withdrawn.body.error).toBe('revoked');
    expectDocumented('open', withdrawn);
  });

  it('refusals of every kind, each listed for its action with its status', async () => {
    const refusals: [Action, Promise<Answer>, string][] = [
      ['request', cloud.call('request', { ...company, ttl_hours: 721 }), 'invalid_field'],
      ['request', cloud.call('request', { ...company, secret: 'glsk_wrong' }), 'bad_secret'],
      ['request', cloud.call('request', { ref: 'ORD-2' }), 'auth_required'],
      ['request', cloud.call('request', '[1, 2]'), 'bad_json'],
      ['request', cloud.call('request', '{}', { 'content-type': 'text/plain' }), 'unsupported_media_type'],
      ['request', cloud.call('request', { ...company, pad: 'x'.repeat(17 * 1024) }), 'too_large'],
      ['request', cloud.call('request', { ...company }, { 'x-service-org': 'example.com' }), 'bad_headers'],
      ['status', cloud.call('status', { ...company, code: 'ZZZZZZZZZZZZ' }), 'not_found'],
      ['status', cloud.call('status', { ...company }), 'invalid_field'],
      ['open', cloud.call('open', { ...company, key_ref: 1, number_id: 1 }), 'actor_required'],
      [
        'open',
        cloud.call('open', { ...company, key_ref: 2_000_000_000, number_id: 1, actor: 'A' }),
        'forbidden',
      ],
      ['open', cloud.call('open', { ...company, key_ref: 0, number_id: 1, actor: 'A' }), 'invalid_field'],
    ];
    for (const [action, pending, code] of refusals) {
      const answer = await pending;
      expect(answer.body.error, `${action}: ${JSON.stringify(answer.body)}`).toBe(code);
      expectDocumented(action, answer);
    }
  });

  it('Idempotency-Key: a replay, a conflict, and a malformed key', async () => {
    const headers = { 'idempotency-key': 'ORD-3-request-1' };
    const first = await cloud.call('request', { ...company, ref: 'ORD-3' }, headers);
    const again = await cloud.call('request', { ...company, ref: 'ORD-3' }, headers);
    expect(again.body).toEqual(first.body);
    expectDocumented('request', again);
    const conflict = await cloud.call('request', { ...company, ref: 'ORD-4' }, headers);
    expect(conflict.body.error).toBe('idempotency_conflict');
    expectDocumented('request', conflict);
    const malformed = await cloud.call('request', { ...company }, { 'idempotency-key': 'has space' });
    expect(malformed.body).toMatchObject({ error: 'invalid_field', field: 'Idempotency-Key' });
    expectDocumented('request', malformed);
  });
});
