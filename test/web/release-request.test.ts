import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { type BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Release (docs/design.md section 10.3): the customer who pressed Continue with the wrong account lets the
 * request go; it is `new` again for the company, with its `request.released` event, and another account may
 * claim it. Nobody else can release it, and no request past `claimed` is released.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  company = await secretCompany(cloud, 'Tidy Cleaners');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

// Each test looks codes up from one address; a fresh minute keeps it clear of the lookup limit.
beforeEach(() => clock.advance(CODE_LOOKUPS.windowMs));

const text = visibleText;

/** A customer, with a barrier unless `barrier` is false, on a request they claimed with Continue. */
async function claimedByNewCustomer(name: string, options: { barrier?: boolean } = {}) {
  const customer = await signedInCustomer(cloud, name);
  const barrier =
    options.barrier === false ? null : await insertBarrier(cloud, customer.id, { name: `${name} gate` });
  const code = await companyRequest(cloud, company);
  await customer.client.get(`/c/${code}`);
  expect((await customer.client.post(`/c/${code}/claim`)).status).toBe(303);
  await customer.client.get(`/c/${code}`);
  return { ...customer, barrier, code };
}

function release(client: BrowserClient, code: string, fields: Record<string, string> = {}) {
  return client.post(`/c/${code}/release`, fields);
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as the company API writes times. */
const stamp = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** The events the company was sent about one request, oldest first. */
async function eventsOf(code: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await cloud.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('company_id', '=', company.org_id)
    .orderBy('seq')
    .execute();
  return rows
    .map((row) => ({
      type: row.type,
      data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
    }))
    .filter((event) => event.data.code === code);
}

async function requestRow(code: string) {
  return cloud.ctx.db
    .selectFrom('requests')
    .select(['state', 'customer_id', 'claimed_at'])
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
}

describe('releasing a claim made with the wrong account', () => {
  it('is offered on the consent form, in a form of its own with the page token and the hint', async () => {
    const { client, code } = await claimedByNewCustomer('Rhea');
    const page = await client.get(`/c/${code}`);
    const form = /<form[^>]*action="\/c\/[^"]+\/release"[^>]*>[\s\S]*?<\/form>/.exec(page.html)?.[0] ?? '';
    expect(form).toContain(`action="/c/${code}/release"`);
    expect(form).toContain('method="post"');
    expect(form).toContain(`name="_csrf" value="${client.csrfToken}"`);
    expect(text(form)).toContain('Release this request');
    expect(text(form)).toContain(
      'Not the right account? Release it, then sign in with the right one and open the link again.',
    );
    expect(page.html).toContain('Grant access');
  });

  it('is offered on the "add your barrier first" card too', async () => {
    const { client, code } = await claimedByNewCustomer('Nobarrier', { barrier: false });
    const page = await client.get(`/c/${code}`);
    expect(text(page.html)).toContain('Add your barrier first');
    expect(page.html).toContain(`action="/c/${code}/release"`);
    expect((await release(client, code)).location).toBe(`/c/${code}?released=1`);
    expect((await requestRow(code)).state).toBe('new');
  });

  it('puts the request back to new: the page says so, status has no claimed_at, and the company gets the event', async () => {
    const { client, code } = await claimedByNewCustomer('Wrongmail');
    clock.advance(30_000);
    const releasedAt = stamp(clock.now());
    const answer = await release(client, code);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}?released=1`);

    const page = await client.get(answer.location!);
    const words = text(page.html);
    expect(words).toContain('You released this request');
    expect(words).toContain('Waiting for you');
    expect(page.html).toContain(`action="/c/${code}/claim"`);
    expect(page.html).not.toContain('Grant access');
    // The notice belongs to the moment of releasing, not to the link.
    expect(text((await client.get(`/c/${code}`)).html)).not.toContain('You released this request');

    expect(await requestRow(code)).toEqual({ state: 'new', customer_id: null, claimed_at: null });
    const status = await companyStatus(cloud, company, code);
    expect(status.body.state).toBe('new');
    expect(status.body).not.toHaveProperty('claimed_at');
    const events = await eventsOf(code);
    expect(events.map((event) => event.type)).toEqual(['request.claimed', 'request.released']);
    expect(events[1]!.data).toEqual({ code, ref: null, state: 'new', released_at: releasedAt });
  });

  it('lets another account claim and grant it afterwards', async () => {
    const { client, code } = await claimedByNewCustomer('Firsttry');
    await release(client, code);
    const right = await signedInCustomer(cloud, 'Rightaccount');
    const barrier = await insertBarrier(cloud, right.id, { name: 'Right gate' });
    await right.client.get(`/c/${code}`);
    expect((await right.client.post(`/c/${code}/claim`)).status).toBe(303);
    const form = await right.client.get(`/c/${code}`);
    expect(form.html).toContain('Grant access');
    expect((await requestRow(code)).customer_id).toBe(right.id);
    const granted = await right.client.post(`/c/${code}/grant`, {
      object: String(barrier.objects[0]!.number_id),
      lifetime: 'withdrawn',
    });
    expect(granted.location).toBe(`/c/${code}?granted=1`);
    expect((await companyStatus(cloud, company, code)).body).toMatchObject({
      state: 'issued',
      claimed_at: expect.any(String),
    });
    expect(text((await client.get(`/c/${code}`)).html)).toContain('Access was already granted');
    expect((await eventsOf(code)).map((event) => event.type)).toEqual([
      'request.claimed',
      'request.released',
      'request.claimed',
      'request.issued',
    ]);
  });
});

describe('[attack:web.release-foreign-request] releasing what is not the customer’s to release', () => {
  it("another account's release of a claimed request is sent back to the page, and nothing changes", async () => {
    const { id, code } = await claimedByNewCustomer('Keeper');
    const other = await signedInCustomer(cloud, 'Snatcher');
    const seen = await other.client.get(`/c/${code}`);
    expect(text(seen.html)).toContain('Taken by another account');
    expect(seen.html).not.toContain('/release"');
    const answer = await release(other.client, code);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}`);
    expect(await requestRow(code)).toMatchObject({ state: 'claimed', customer_id: id });
    expect((await eventsOf(code)).map((event) => event.type)).toEqual(['request.claimed']);
  });

  it('without the page token, or from a signed-out browser, is refused and nothing changes', async () => {
    const { id, client, code } = await claimedByNewCustomer('Tokenless');
    expect((await release(client, code, { _csrf: 'not-the-token' })).status).toBe(403);
    await client.post('/signout');
    const signedOut = await release(client, code);
    expect(signedOut.status).toBe(401);
    expect(text(signedOut.html)).toContain('Sign in to continue.');
    expect(await requestRow(code)).toMatchObject({ state: 'claimed', customer_id: id });
    expect((await eventsOf(code)).map((event) => event.type)).toEqual(['request.claimed']);
  });

  it('a new, granted or declined request is left as it was, the holder’s own included', async () => {
    const fresh = await companyRequest(cloud, company);
    const someone = await signedInCustomer(cloud, 'Early');
    await someone.client.get(`/c/${fresh}`);
    expect((await release(someone.client, fresh)).location).toBe(`/c/${fresh}`);
    expect((await eventsOf(fresh)).map((event) => event.type)).toEqual([]);

    const granted = await claimedByNewCustomer('Granter');
    await granted.client.post(`/c/${granted.code}/grant`, {
      object: String(granted.barrier!.objects[0]!.number_id),
      lifetime: 'withdrawn',
    });
    expect((await release(granted.client, granted.code)).location).toBe(`/c/${granted.code}`);
    expect((await requestRow(granted.code)).state).toBe('issued');

    const declined = await claimedByNewCustomer('Decliner');
    await declined.client.post(`/c/${declined.code}/decline`);
    expect((await release(declined.client, declined.code)).location).toBe(`/c/${declined.code}`);
    expect((await requestRow(declined.code)).state).toBe('declined');
    expect((await eventsOf(declined.code)).map((event) => event.type)).toEqual([
      'request.claimed',
      'request.declined',
    ]);
  });

  it('counts in the same per-address limit as every other /c/ route', async () => {
    const { client, code } = await claimedByNewCustomer('Counter');
    let last = 0;
    for (let i = 0; i < CODE_LOOKUPS.max; i += 1) last = (await release(client, 'AAAAAAAAAAAA')).status;
    expect(last).toBe(429);
    expect((await release(client, code)).status).toBe(429);
    expect((await requestRow(code)).state).toBe('claimed');
  });
});
