import { WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { SIGNING_SECRET_OVERLAP_MS } from '../../cloud/rules/events/signing-secrets.js';
import { verifyWebhook } from '../../company/client/index.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings, setCallback } from '../support/event-company.js';
import { standardVerifier } from '../support/standard-webhooks.js';
import { type Received, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * An endpoint's signing secrets (docs/design.md sections 6, 6.2 and 11.4): the first is made with the endpoint
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

/**
 * A company whose first endpoint was added through its page, the secret that answer showed, and the endpoint's
 * page, which that answer is.
 */
async function savedWithSecret(name: string): Promise<{ owner: CompanyOwner; secret: string; path: string }> {
  const owner = await companyOwner(cloud, { name });
  await owner.client.get(`/company/${owner.companyId}/callback`);
  const saved = await owner.client.post(`/company/${owner.companyId}/callback`, {
    callback_url: receiver.url,
  });
  expect(saved.status).toBe(200);
  const shown = saved.html.match(SECRET) ?? [];
  expect(shown).toHaveLength(1);
  const path = /action="(\/company\/\d+\/callback\/\d+)\/signing-secret"/.exec(saved.html)?.[1];
  expect(path).toBeDefined();
  return { owner, secret: shown[0]!, path: path! };
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
  it('is made with the endpoint and shown once; a delivery verifies with standardwebhooks (v1) and our client (v1a)', async () => {
    const { owner, secret, path } = await savedWithSecret('Signed Couriers');
    const page = await owner.client.get(path);
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
    // Moving the endpoint to another address makes no new secret; the one shown goes on signing.
    const moved = await owner.client.post(path, { callback_url: `${receiver.url}?moved=1` });
    expect(moved.status).toBe(200);
    expect(visibleText(moved.html)).toContain('Address saved.');
    expect(moved.html).not.toMatch(SECRET);
    const there = await delivered(owner.companyId);
    expect(standardVerify(secret, there)).toMatchObject({ type: 'ping' });
  });

  it('[attack:web.signing-secret-shown-twice] the add form sent again adds no second endpoint and shows no second secret', async () => {
    const owner = await companyOwner(cloud, { name: 'Double Couriers' });
    const list = `/company/${owner.companyId}/callback`;
    await owner.client.get(list);
    const first = await owner.client.post(list, { callback_url: receiver.url });
    expect(first.html.match(SECRET)).toHaveLength(1);
    const again = await owner.client.post(list, { callback_url: receiver.url });
    expect(again.status).toBe(409);
    expect(again.html).not.toMatch(SECRET);
    expect(visibleText(again.html)).toContain('You have an endpoint at this address already');
    const rows = await cloud.ctx.db
      .selectFrom('endpoints')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('rotated, signs with both secrets for the overlap and then with the new one only', async () => {
    const { owner, secret: old, path: endpoint } = await savedWithSecret('Rotating Couriers');
    const path = `${endpoint}/signing-secret`;
    const page = await owner.client.get(endpoint);
    expect(page.html).toContain('data-confirm="Rotate the signing secret?');
    const rotated = await owner.client.post(path, { replaces: rotationForm(page.html) });
    expect(rotated.status).toBe(200);
    const [fresh] = rotated.html.match(SECRET) ?? [];
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(old);
    // The hint is base64: taken as text, not as a pattern, since a `+` in it is a quantifier there.
    const text = visibleText(rotated.html);
    const retiring = text.slice(text.indexOf(`whsec_…${old.slice(-4)} Retiring`));
    expect(retiring).toMatch(/^whsec_….{4} Retiring .*24 h 0 min left/);

    const during = await delivered(owner.companyId);
    expect(during.signature.split(' ').map((part) => part.split(',')[0])).toEqual(['v1', 'v1', 'v1a']);
    expect(standardVerify(fresh!, during)).toMatchObject({ type: 'ping' });
    expect(standardVerify(old, during)).toMatchObject({ type: 'ping' });

    clock.advance(SIGNING_SECRET_OVERLAP_MS + 1000);
    const after = await delivered(owner.companyId);
    expect(standardVerify(fresh!, after)).toMatchObject({ type: 'ping' });
    expect(() => standardVerify(old, after)).toThrow('No matching signature found');
    expect(visibleText((await owner.client.get(endpoint)).html)).not.toContain(old.slice(-4));
  });

  it('a replaced secret expired now stops signing at once', async () => {
    const { owner, secret: old, path } = await savedWithSecret('Leaky Couriers');
    const page = await owner.client.get(path);
    const rotated = await owner.client.post(`${path}/signing-secret`, {
      replaces: rotationForm(page.html),
    });
    const [fresh] = rotated.html.match(SECRET) ?? [];
    const expire = /action="([^"]*\/signing-secret\/\d+\/expire)"/.exec(rotated.html)?.[1];
    expect(rotated.html).toContain(`data-confirm="Stop signing with the old secret …${old.slice(-4)} now?`);
    const expired = await owner.client.post(expire!);
    expect(expired.status).toBe(200);
    expect(visibleText(expired.html)).toContain(
      'The old signing secret no longer signs this endpoint’s events.',
    );

    const got = await delivered(owner.companyId);
    expect(got.signature.split(' ').map((part) => part.split(',')[0])).toEqual(['v1', 'v1a']);
    expect(standardVerify(fresh!, got)).toMatchObject({ type: 'ping' });
    expect(() => standardVerify(old, got)).toThrow('No matching signature found');
    // Expired twice: the list was out of date, and the page says so.
    expect((await owner.client.post(expire!)).status).toBe(409);
  });

  it('[attack:web.signing-secret-shown-twice] the rotation form sent again shows no secret and makes none', async () => {
    const { owner, path: endpoint } = await savedWithSecret('Reloading Couriers');
    const path = `${endpoint}/signing-secret`;
    const form = { replaces: rotationForm((await owner.client.get(endpoint)).html) };
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
    const { owner: ours, path: ourEndpoint } = await savedWithSecret('Our Couriers');
    const rotated = await ours.client.post(`${ourEndpoint}/signing-secret`, {
      replaces: rotationForm((await ours.client.get(ourEndpoint)).html),
    });
    const expire = /action="\/company\/\d+\/callback\/\d+\/signing-secret\/(\d+)\/expire"/.exec(
      rotated.html,
    )?.[1];
    expect(expire).toBeDefined();
    const { owner: theirs, path: theirEndpoint } = await savedWithSecret('Their Couriers');
    await theirs.client.get(theirEndpoint);
    // Their own endpoint's form, naming our secret: not theirs, so nothing ends.
    const mine = await theirs.client.post(`${theirEndpoint}/signing-secret/${expire}/expire`);
    expect(mine.status).toBe(409);
    // Our endpoint under their company's address, and under ours: neither is theirs.
    const ourId = ourEndpoint.split('/').at(-1);
    const borrowed = `/company/${theirs.companyId}/callback/${ourId}`;
    expect((await theirs.client.post(`${borrowed}/signing-secret/${expire}/expire`)).status).toBe(404);
    expect((await theirs.client.post(`${borrowed}/signing-secret`, { replaces: '0' })).status).toBe(404);
    expect((await theirs.client.post(`${ourEndpoint}/signing-secret`, { replaces: '0' })).status).toBe(404);
    expect(
      await cloud.ctx.db
        .selectFrom('callback_secrets')
        .select('id')
        .where('company_id', '=', ours.companyId)
        .execute(),
    ).toHaveLength(2);
    const live = await cloud.ctx.db
      .selectFrom('callback_secrets')
      .select('retires_at')
      .where('id', '=', Number(expire))
      .executeTakeFirstOrThrow();
    expect(live.retires_at!.getTime()).toBeGreaterThan(clock.now().getTime());
  });

  it('an endpoint that had its address before secrets existed is told so, and makes one', async () => {
    const owner = await companyOwner(cloud, { name: 'Early Couriers' });
    await setCallback(cloud.ctx, owner.companyId, receiver.url);
    const list = await owner.client.get(`/company/${owner.companyId}/callback`);
    const path = /href="(\/company\/\d+\/callback\/\d+)"/.exec(list.html)?.[1];
    const page = await owner.client.get(path!);
    expect(visibleText(page.html)).toContain(
      'This endpoint has no signing secret: its events carry only the v1a signature.',
    );
    const before = await delivered(owner.companyId);
    expect(before.signature).toMatch(/^v1a,/);
    const made = await owner.client.post(`${path}/signing-secret`, {
      replaces: rotationForm(page.html),
    });
    const [secret] = made.html.match(SECRET) ?? [];
    expect(standardVerify(secret!, await delivered(owner.companyId))).toMatchObject({ type: 'ping' });
  });
});
