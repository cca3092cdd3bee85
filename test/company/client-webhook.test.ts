import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import {
  GatelinkClient,
  SigningKey,
  type VerifyKey,
  type VerifyWebhookInput,
  verifyWebhook,
  WebhookVerificationError,
} from '../../company/client/index.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { setCallback } from '../support/event-company.js';
import { type Received, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The client's check of an event delivery (cloud/README.md, "Verifying a delivery"; docs/design.md section
 * 11.6), on a real delivery of the cloud: a `request.claimed` after the company's own request, checked with
 * the key the client fetched from `/.well-known/service.json`; then the same delivery tampered with, replayed
 * late, or checked with another key.
 */
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let key: VerifyKey;
let published: string;
let delivery: Received;
let code: string;
/** When the delivery was made, for checking it as if at another moment. */
let sentAt: Date;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  const service = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  published = (JSON.parse(service.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(published);
  const company = await secretCompany(cloud, 'Hooked Couriers');
  await setCallback(cloud.ctx, company.org_id, receiver.url);
  const client = new GatelinkClient({
    baseUrl: cloud.baseUrl,
    auth: { orgId: company.org_id, secret: company.secret },
  });
  key = await client.webhookKey();
  ({ code } = await client.request({ ref: 'ORD-HOOK' }));
  const customer = await createCustomer(cloud.ctx, { displayName: 'Hilda' });
  await claimRequest(cloud.ctx, { code, customerId: customer.id });
  await deliverDue(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 2000 });
  delivery = receiver.received[0]!;
  sentAt = new Date(delivery.timestamp * 1000);
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

/** The delivery as it came, checked at the moment it was sent, with `change` applied. */
function check(change: Partial<VerifyWebhookInput> = {}) {
  return verifyWebhook({
    headers: delivery.headers,
    body: Buffer.from(delivery.body),
    publicKey: key,
    now: sentAt,
    ...change,
  });
}

function refusal(change: Partial<VerifyWebhookInput>): string {
  try {
    check(change);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('the delivery was accepted');
}

function withHeader(name: string, value: string | undefined): Record<string, string | undefined> {
  return { ...(delivery.headers as Record<string, string>), [name]: value };
}

describe('a delivery of the cloud', () => {
  it('verifies with the key fetched from service.json, and is the event', async () => {
    expect(key.base64).toBe(published);
    const event = check();
    expect(event).toMatchObject({
      type: 'request.claimed',
      id: delivery.id,
      data: { code, ref: 'ORD-HOOK' },
    });
    expect(event.at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('fetches the key with a client made without credentials, which refuses calls', async () => {
    const receiving = new GatelinkClient({ baseUrl: cloud.baseUrl });
    expect((await receiving.webhookKey()).base64).toBe(published);
    await expect(receiving.status(code)).rejects.toThrow('status needs auth');
  });

  it('verifies from a fetch Headers object, a record in any letter case, a string body, a base64 key', () => {
    const record = {
      'Webhook-Id': delivery.id,
      'WEBHOOK-TIMESTAMP': String(delivery.timestamp),
      'Webhook-Signature': delivery.signature,
    };
    expect(check({ headers: new Headers(record) }).id).toBe(delivery.id);
    expect(check({ headers: record, body: delivery.body, publicKey: published }).id).toBe(delivery.id);
  });

  it('verifies when one of several signatures does (a key rotation), whatever comes first', () => {
    const other = Buffer.from(SigningKey.generate().sign(Buffer.from('x'))).toString('base64');
    const several = `v1,${Buffer.alloc(32).toString('base64')} v1a,${other} ${delivery.signature}`;
    expect(check({ headers: withHeader('webhook-signature', several) }).id).toBe(delivery.id);
  });

  it('is refused without its headers, or with a timestamp that is not Unix seconds', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(refusal({ headers: withHeader(name, undefined) })).toBe('missing_header');
    }
    expect(refusal({ headers: withHeader('webhook-timestamp', `${delivery.timestamp}.5`) })).toBe(
      'bad_timestamp',
    );
  });
});

describe('an attack on the callback address', () => {
  it('[attack:webhook.tampered-body] one byte of the body, the id or the timestamp changed is refused', () => {
    const body = Buffer.from(delivery.body);
    body[body.indexOf('ORD-HOOK')] = 'X'.charCodeAt(0);
    expect(refusal({ body })).toBe('bad_signature');
    expect(refusal({ body: `${delivery.body} ` })).toBe('bad_signature');
    expect(refusal({ headers: withHeader('webhook-id', `${delivery.id}x`) })).toBe('bad_signature');
    const later = String(delivery.timestamp + 1);
    expect(refusal({ headers: withHeader('webhook-timestamp', later) })).toBe('bad_signature');
  });

  it('[attack:webhook.replayed] a delivery older than the tolerance is refused, as is one dated ahead', () => {
    const at = (seconds: number) => new Date(sentAt.getTime() + seconds * 1000);
    expect(check({ now: at(300) }).id).toBe(delivery.id);
    expect(refusal({ now: at(301) })).toBe('too_old');
    expect(refusal({ now: at(-301) })).toBe('too_new');
    expect(refusal({ now: at(61), toleranceSeconds: 60 })).toBe('too_old');
  });

  it('[attack:webhook.wrong-key] a signature by another key, or a check with another key, is refused', () => {
    expect(refusal({ publicKey: SigningKey.generate().publicKey })).toBe('bad_signature');
    const forger = SigningKey.generate();
    const content = Buffer.from(`${delivery.id}.${delivery.timestamp}.${delivery.body}`);
    const forged = `v1a,${Buffer.from(forger.sign(content)).toString('base64')}`;
    expect(refusal({ headers: withHeader('webhook-signature', forged) })).toBe('bad_signature');
    // The identity point verifies forged signatures under a lenient verifier; it is refused as a key.
    const identity = Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]).toString('base64');
    expect(refusal({ publicKey: identity })).toBe('bad_key');
  });

  it('a signed body that is not an event is refused as not_json', () => {
    const signer = SigningKey.generate();
    const body = 'not json';
    const signature = Buffer.from(signer.sign(Buffer.from(`${delivery.id}.${delivery.timestamp}.${body}`)));
    const headers = withHeader('webhook-signature', `v1a,${signature.toString('base64')}`);
    expect(refusal({ headers, body, publicKey: signer.publicKey })).toBe('not_json');
  });
});
