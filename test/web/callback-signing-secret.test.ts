import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { SIGNING_SECRET_OVERLAP_MS } from '../../cloud/rules/events/signing-secrets.js';
import { verifyWebhook } from '../../company/client/index.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings } from '../support/event-company.js';
import { standardVerifier } from '../support/standard-webhooks.js';
import { type Received, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The callback's signing secrets (docs/design.md sections 6 and 11.4): the first is made with the first address
 * and shown once; each delivery then verifies with the `standardwebhooks` package, as a company's receiver
 * would, and with the company client's `v1a` check; a rotation signs with both secrets for the overlap, and
 * "Expire it now" ends the old one at once. Deliveries go to a receiver on loopback, with a fake clock.
 */
const SECRET = /whsec_[A-Za-z0-9+/]{43}=/g;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let serviceKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  serviceKey = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(serviceKey);
});

afterEach(() => {
  receiver.received.length = 0;
  vi.useRealTimers();
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

/** A company whose first address was saved through its page, and the secret that answer showed. */
async function savedWithSecret(name: string): Promise<{ owner: CompanyOwner; secret: string }> {
  const owner = await companyOwner(cloud, { name });
  await owner.client.get(`/company/${owner.companyId}/callback`);
  const saved = await owner.client.post(`/company/${owner.companyId}/callback`, {
    callback_url: receiver.url,
  });
  expect(saved.status).toBe(200);
  const shown = saved.html.match(SECRET) ?? [];
  expect(shown).toHaveLength(1);
  return { owner, secret: shown[0]! };
}

/** One test event delivered now, as the receiver got it. */
async function delivered(companyId: number): Promise<Received> {
  await enqueuePings(cloud.ctx, companyId);
  expect(await deliverDue(cloud.ctx, { allowPrivateAddresses: true })).toEqual({ delivered: 1, failed: 0 });
  expect(receiver.received).toHaveLength(1);
  return receiver.received.pop()!;
}

const standardVerify = standardVerifier(clock);

function rotationForm(html: string): string {
  const replaces = /name="replaces" value="(\d+)"/.exec(html)?.[1];
  expect(replaces).toBeDefined();
  return replaces!;
}

describe('the signing secret', () => {
  it('is made with the first address and shown once; a delivery verifies with standardwebhooks (v1) and our client (v1a)', async () => {
    const { owner, secret } = await savedWithSecret('Signed Couriers');
    const page = await owner.client.get(`/company/${owner.companyId}/callback`);
    expect(page.html).not.toMatch(SECRET);
    expect(visibleText(page.html)).toContain(`whsec_…${secret.slice(-4)} In use`);
    // Kept sealed: the database holds no copy of it a leaked table would give away.
    const stored = await cloud.ctx.db.selectFrom('callback_secrets').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));

    const got = await delivered(owner.companyId);
    expect(got.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1a,[A-Za-z0-9+/]{86}==$/);
    expect(standardVerify(secret, got)).toMatchObject({ type: 'ping', id: got.id });
    expect(got.verified).toBe(true);
    const event = verifyWebhook({
      headers: got.headers,
      body: got.body,
      publicKey: serviceKey,
      now: clock.now(),
    });
    expect(event.id).toBe(got.id);
    // Another secret, or the body changed by a byte, is refused by the package as by any receiver.
    expect(() => standardVerify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got)).toThrow(
      WebhookVerificationError,
    );
    expect(() => standardVerify(secret, { ...got, body: got.body.replace('"ping"', '"pong"') })).toThrow(
      WebhookVerificationError,
    );
    // Saving another address later makes no new secret.
    const again = await owner.client.post(`/company/${owner.companyId}/callback`, {
      callback_url: receiver.url,
    });
    expect(again.html).not.toMatch(SECRET);
  });

  it('rotated, signs with both secrets for the overlap and then with the new one only', async () => {
    const { owner, secret: old } = await savedWithSecret('Rotating Couriers');
    const path = `/company/${owner.companyId}/callback/signing-secret`;
    const page = await owner.client.get(`/company/${owner.companyId}/callback`);
    expect(page.html).toContain('data-confirm="Rotate the signing secret?');
    const rotated = await owner.client.post(path, { replaces: rotationForm(page.html) });
    expect(rotated.status).toBe(200);
    const [fresh] = rotated.html.match(SECRET) ?? [];
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(old);
    expect(visibleText(rotated.html)).toMatch(
      new RegExp(`whsec_…${old.slice(-4)} Retiring .*24 h 0 min left`),
    );

    const during = await delivered(owner.companyId);
    expect(during.signature.split(' ').map((part) => part.split(',')[0])).toEqual(['v1', 'v1', 'v1a']);
    expect(standardVerify(fresh!, during)).toMatchObject({ type: 'ping' });
    expect(standardVerify(old, during)).toMatchObject({ type: 'ping' });

    clock.advance(SIGNING_SECRET_OVERLAP_MS + 1000);
    const after = await delivered(owner.companyId);
    expect(standardVerify(fresh!, after)).toMatchObject({ type: 'ping' });
    expect(() => standardVerify(old, after)).toThrow('No matching signature found');
    expect(visibleText((await owner.client.get(`/company/${owner.companyId}/callback`)).html)).not.toContain(
      old.slice(-4),
    );
  });

  it('a replaced secret expired now stops signing at once', async () => {
    const { owner, secret: old } = await savedWithSecret('Leaky Couriers');
    const page = await owner.client.get(`/company/${owner.companyId}/callback`);
    const rotated = await owner.client.post(`/company/${owner.companyId}/callback/signing-secret`, {
      replaces: rotationForm(page.html),
    });
    const [fresh] = rotated.html.match(SECRET) ?? [];
    const expire = /action="([^"]*\/signing-secret\/\d+\/expire)"/.exec(rotated.html)?.[1];
    expect(rotated.html).toContain(`data-confirm="Stop signing with the old secret …${old.slice(-4)} now?`);
    const expired = await owner.client.post(expire!);
    expect(expired.status).toBe(200);
    expect(visibleText(expired.html)).toContain('The old signing secret no longer signs your events.');

    const got = await delivered(owner.companyId);
    expect(got.signature.split(' ').map((part) => part.split(',')[0])).toEqual(['v1', 'v1a']);
    expect(standardVerify(fresh!, got)).toMatchObject({ type: 'ping' });
    expect(() => standardVerify(old, got)).toThrow('No matching signature found');
    // Expired twice: the list was out of date, and the page says so.
    expect((await owner.client.post(expire!)).status).toBe(409);
  });

  it('[attack:web.signing-secret-shown-twice] the rotation form sent again shows no secret and makes none', async () => {
    const { owner } = await savedWithSecret('Reloading Couriers');
    const path = `/company/${owner.companyId}/callback/signing-secret`;
    const form = {
      replaces: rotationForm((await owner.client.get(`/company/${owner.companyId}/callback`)).html),
    };
    const first = await owner.client.post(path, form);
    expect(first.html.match(SECRET)).toHaveLength(1);
    const resent = await owner.client.post(path, form);
    expect(resent.status).toBe(409);
    expect(resent.html).not.toMatch(SECRET);
    expect(visibleText(resent.html)).toContain('This form was sent before');
    const rows = await cloud.ctx.db
      .selectFrom('callback_secrets')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .execute();
    expect(rows).toHaveLength(2);
  });

  it("[attack:web.signing-secret-of-another-company] another company can neither expire nor rotate a company's secret", async () => {
    const { owner: ours } = await savedWithSecret('Our Couriers');
    const rotated = await ours.client.post(`/company/${ours.companyId}/callback/signing-secret`, {
      replaces: rotationForm((await ours.client.get(`/company/${ours.companyId}/callback`)).html),
    });
    const expire = /action="\/company\/\d+\/callback\/signing-secret\/(\d+)\/expire"/.exec(rotated.html)?.[1];
    const { owner: theirs } = await savedWithSecret('Their Couriers');
    await theirs.client.get(`/company/${theirs.companyId}/callback`);
    // Their own company's form, naming our secret: not theirs, so nothing ends.
    const mine = await theirs.client.post(
      `/company/${theirs.companyId}/callback/signing-secret/${expire}/expire`,
    );
    expect(mine.status).toBe(409);
    expect(
      (await theirs.client.post(`/company/${ours.companyId}/callback/signing-secret`, { replaces: '0' }))
        .status,
    ).toBe(404);
    const live = await cloud.ctx.db
      .selectFrom('callback_secrets')
      .select('retires_at')
      .where('id', '=', Number(expire))
      .executeTakeFirstOrThrow();
    expect(live.retires_at!.getTime()).toBeGreaterThan(clock.now().getTime());
  });

  it('a company that had an address before secrets existed is told so, and makes one', async () => {
    const owner = await companyOwner(cloud, { name: 'Early Couriers' });
    await cloud.ctx.db
      .updateTable('companies')
      .set({ callback_url: receiver.url })
      .where('id', '=', owner.companyId)
      .execute();
    const page = await owner.client.get(`/company/${owner.companyId}/callback`);
    expect(visibleText(page.html)).toContain(
      'You have no signing secret: your events carry only the v1a signature.',
    );
    const before = await delivered(owner.companyId);
    expect(before.signature).toMatch(/^v1a,/);
    const made = await owner.client.post(`/company/${owner.companyId}/callback/signing-secret`, {
      replaces: rotationForm(page.html),
    });
    const [secret] = made.html.match(SECRET) ?? [];
    expect(standardVerify(secret!, await delivered(owner.companyId))).toMatchObject({ type: 'ping' });
  });
});
