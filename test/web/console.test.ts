import { resolve } from 'node:path';
import { domainToASCII } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { CHOOSABLE_KINDS } from '../../cloud/rules/events/callback-kinds.js';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { addEndpointRow, enqueuePings, setCallback } from '../support/event-company.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';

/**
 * The operator console (docs/design.md section 11.5): signing in with the token and its limits, who is refused,
 * reviewing companies (approval pinning the proven key, refusal with a reason, suspension and resumption) with
 * the history of who did each, and operator accounts that use the console with their own sign-in.
 */
let database: TestDatabase;
let cloud: TestCloud;
const clock = new FakeClock();
const keyFiles = new KeyFileServer();
let domainCount = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  await keyFiles.start();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
});

afterAll(async () => {
  await cloud?.stop();
  await keyFiles.stop();
  await database?.close();
});

/**
 * A browser signed in to the console with the operator token: a console session made directly, as the form
 * makes it (the form itself, and its limit, are tried below).
 */
async function tokenConsole(): Promise<BrowserClient> {
  const client = new BrowserClient(cloud.app);
  client.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
  return client;
}

async function account(name: string, email: string, confirmed = true) {
  const customer = await createCustomer(cloud.ctx, { displayName: name, email });
  if (confirmed) {
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email_verified_at: clock.now() })
      .where('id', '=', customer.id)
      .execute();
  }
  return { id: customer.id, client: await BrowserClient.signedIn(cloud, customer.id) };
}

async function companyRow(id: number) {
  return cloud.ctx.db.selectFrom('companies').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A pending domain company whose key file serves `key`, checked and proved as the company's own pages do. */
async function provenCompany(key: SigningKey, proven: string = key.publicKey.base64) {
  domainCount += 1;
  const domain = `proven-${domainCount}.example`;
  keyFiles.publish(domain, key.publicKey.base64);
  const owner = await companyOwner(cloud, { name: `Proven ${domainCount} Ltd`, domain });
  await cloud.ctx.db
    .updateTable('companies')
    .set({ key_published: proven, key_published_at: clock.now(), key_proven: proven })
    .where('id', '=', owner.companyId)
    .execute();
  return { ...owner, domain };
}

function refusedToOperatorsOnly(answer: { status: number; html: string }) {
  expect(answer.status).toBe(403);
  expect(visibleText(answer.html)).toContain('Operators only');
  expect(answer.html).toContain('href="/console/signin"');
}

describe('signing in with the operator token', () => {
  it('[attack:web.console-token-guess] refuses a wrong token on the form, and stops an address that keeps guessing, even with the right token', async () => {
    clock.advance(3600_000); // a window of its own for the per-address count
    const client = new BrowserClient(cloud.app);
    await client.get('/console/signin');
    const wrong = await client.post('/console/signin', { token: `${cloud.operatorToken.slice(0, -1)}x` });
    expect(wrong.status).toBe(401);
    expect(visibleText(wrong.html)).toContain('This is not the operator token.');
    expect(client.cookie('gatelink-console')).toBeUndefined();
    refusedToOperatorsOnly(await client.get('/console'));

    for (let attempt = 2; attempt <= 10; attempt += 1) {
      expect((await client.post('/console/signin', { token: `guess-${attempt}` })).status).toBe(401);
    }
    const limited = await client.post('/console/signin', { token: cloud.operatorToken });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(visibleText(limited.html)).toContain('Too many sign-in attempts from here');
    expect(client.cookie('gatelink-console')).toBeUndefined();

    clock.advance(3600_000);
    expect((await client.post('/console/signin', { token: cloud.operatorToken })).status).toBe(303);
    expect((await client.get('/console')).status).toBe(200);
  });

  it('keeps the console signed in for 12 hours at most, in its own HttpOnly cookie, and ends it at sign-out', async () => {
    const client = new BrowserClient(cloud.app);
    await client.get('/console/signin');
    const signedIn = await client.post('/console/signin', { token: cloud.operatorToken });
    const cookie = String(signedIn.headers['set-cookie']);
    expect(cookie).toMatch(/gatelink-console=[A-Za-z0-9_-]{43}/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    const page = await client.get('/console');
    expect(page.status).toBe(200);
    expect(visibleText(page.html)).toContain('Signed in as operator token');

    clock.advance(11 * 3600_000);
    expect((await client.get('/console')).status).toBe(200);
    clock.advance(3600_000);
    refusedToOperatorsOnly(await client.get('/console'));

    const again = new BrowserClient(cloud.app);
    await again.get('/console/signin');
    await again.post('/console/signin', { token: cloud.operatorToken });
    await again.get('/console');
    const out = await again.post('/console/signout');
    expect(out.location).toBe('/console/signin');
    refusedToOperatorsOnly(await again.get('/console'));
  });
});

describe('who may not use the console', () => {
  async function expectNothingReachable(client: BrowserClient, companyId: number) {
    for (const url of [
      '/console',
      '/console?status=pending',
      `/console/companies/${companyId}`,
      '/console/operators',
    ]) {
      refusedToOperatorsOnly(await client.get(url));
    }
    await client.get('/console/signin'); // a form's token, so that only the operator check stands in the way
    const posts: [string, Record<string, string>][] = [
      [`/console/companies/${companyId}/approve`, {}],
      [`/console/companies/${companyId}/reject`, { reason: 'no' }],
      [`/console/companies/${companyId}/suspend`, { reason: 'no' }],
      [`/console/companies/${companyId}/resume`, {}],
      ['/console/operators', { email: 'me@example.com' }],
      ['/console/operators/1/withdraw', {}],
    ];
    for (const [url, fields] of posts) refusedToOperatorsOnly(await client.post(url, fields));
    const json = await client.postJson(`/console/companies/${companyId}/approve`, {});
    expect(json.status).toBe(403);
    expect(JSON.parse(json.html)).toMatchObject({ error: 'operator_required' });
    expect((await companyRow(companyId)).status).toBe('pending');
    const operators = await cloud.ctx.db.selectFrom('operators').selectAll().execute();
    expect(operators.filter((row) => row.customer_id === 1)).toEqual([]);
  }

  it('[attack:web.console-customer] a visitor, or a signed-in customer, gets 403 operator_required on every page and post', async () => {
    const { companyId } = await companyOwner(cloud, { name: 'Waiting Ltd' });
    await expectNothingReachable(new BrowserClient(cloud.app), companyId);
    const customer = await account('Carl Customer', 'carl@example.com');
    await expectNothingReachable(customer.client, companyId);
    expect(visibleText((await customer.client.get('/console')).html)).toContain(
      'Your account has no operator rights.',
    );
  });

  it("[attack:web.console-member] a company's own owner cannot approve it, nor reach any console page", async () => {
    const owner = await companyOwner(cloud, { name: 'Self Approving Ltd' });
    expect((await owner.client.get(`/company/${owner.companyId}`)).status).toBe(200);
    await expectNothingReachable(owner.client, owner.companyId);
  });

  it('[attack:web.console-csrf] a console post without the form token, or from another site, is refused and changes nothing', async () => {
    const { companyId } = await companyOwner(cloud, { name: 'Cross Site Ltd' });
    const client = await tokenConsole();
    await client.get(`/console/companies/${companyId}`);
    const noToken = await client.post(`/console/companies/${companyId}/reject`, { _csrf: '', reason: 'x' });
    expect(noToken.status).toBe(403);
    expect(visibleText(noToken.html)).toContain('The form has expired or came from another site');
    const crossSite = await client.post(
      `/console/companies/${companyId}/approve`,
      {},
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    const signIn = await new BrowserClient(cloud.app).post('/console/signin', {
      _csrf: '',
      token: cloud.operatorToken,
    });
    expect(signIn.status).toBe(403);
    expect((await companyRow(companyId)).status).toBe('pending');
  });
});

describe('the list of companies', () => {
  it('shows those waiting first, with domain in both spellings, contact, key fingerprint and proof, and filters by state', async () => {
    const approved = await secretCompany(cloud, 'Already Approved Ltd');
    const key = SigningKey.generate();
    const domain = 'bäckerei-liste.example';
    const punycode = domainToASCII(domain);
    const owner = await companyOwner(cloud, { name: 'Bäckerei Liste', domain: punycode });
    await cloud.ctx.db
      .updateTable('companies')
      .set({
        key_published: key.publicKey.base64,
        key_published_at: clock.now(),
        key_proven: key.publicKey.base64,
      })
      .where('id', '=', owner.companyId)
      .execute();
    const client = await tokenConsole();
    const text = visibleText((await client.get('/console')).html);
    expect(text.indexOf('Bäckerei Liste')).toBeGreaterThan(-1);
    expect(text.indexOf('Bäckerei Liste')).toBeLessThan(text.indexOf('Already Approved Ltd'));
    expect(text).toContain(`${domain} (${punycode})`);
    expect(text).toContain('ops@example.com');
    expect(text).toContain(key.publicKey.fingerprint);
    expect(text).toContain('Holding the key: proved');

    const onlyApproved = visibleText((await client.get('/console?status=approved')).html);
    expect(onlyApproved).toContain('Already Approved Ltd');
    expect(onlyApproved).not.toContain('Bäckerei Liste');
    expect(approved.org_id).toBeGreaterThan(0);
  });

  it("finds a company by a part of its name, its domain either way, its id, or a member's e-mail, with its events' health", async () => {
    const punycode = domainToASCII('fundbüro-suche.example');
    const owner = await companyOwner(cloud, {
      name: 'Fundbüro Suche',
      domain: punycode,
      email: 'finder@search.example',
    });
    const other = await secretCompany(cloud, 'Unrelated Hauling Ltd');
    const client = await tokenConsole();
    const found = async (query: string) =>
      visibleText((await client.get(`/console?q=${encodeURIComponent(query)}`)).html);
    for (const query of [
      'ndbüro su',
      'FUNDBÜRO',
      'fundbüro-suche.example',
      punycode,
      String(owner.companyId),
      'finder@SEARCH',
    ]) {
      const text = await found(query);
      expect(text, query).toContain(`Fundbüro Suche id ${owner.companyId}`);
      expect(text, query).not.toContain('Unrelated Hauling Ltd');
    }
    expect(await found('Unrelated')).toContain('Events: no callback address, nothing is sent');
    // A search's wildcards are taken literally, and one that matches nothing says so.
    expect(await found('%')).toContain('No company matches “%”.');
    // The state tabs keep the search; an approved-only search does not list a waiting company.
    const page = await client.get(`/console?q=${owner.companyId}`);
    expect(page.html).toContain(`href="/console?status=approved&amp;q=${owner.companyId}"`);
    expect(visibleText((await client.get(`/console?status=approved&q=${owner.companyId}`)).html)).toContain(
      'No company matches',
    );
    expect(other.org_id).not.toBe(owner.companyId);
  });
});

/** Marks an endpoint failing at `url` (its own address unless given), as the delivery does after every retry. */
async function markFailing(endpointId: number, url?: string) {
  await cloud.ctx.db
    .updateTable('endpoints')
    .set((eb) => ({
      failing_since: clock.now(),
      failing_url: url ?? eb.ref('url'),
      last_error: 'answered 500; only a 2xx status is a delivery',
    }))
    .where('id', '=', endpointId)
    .execute();
}

async function firstEndpointId(companyId: number): Promise<number> {
  const row = await cloud.ctx.db
    .selectFrom('endpoints')
    .select('id')
    .where('company_id', '=', companyId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe("the list's line on events", () => {
  it("says how the events fare at each company's endpoints, from none to several, for the whole list at once", async () => {
    const company = async (name: string, url: string | null) => {
      const { org_id } = await secretCompany(cloud, `Endpoint Health ${name}`);
      await setCallback(cloud.ctx, org_id, url);
      return org_id;
    };
    await company('None', null);
    await company('Every Kind', 'https://every.example/hook');
    const chosen = await company('Chosen Kinds', 'https://chosen.example/hook');
    await cloud.ctx.db
      .updateTable('endpoints')
      .set({ kinds: ['open.succeeded', 'open.failed'] })
      .where('company_id', '=', chosen)
      .execute();
    const failing = await company('Failing', 'https://failing.example/hook');
    await markFailing(await firstEndpointId(failing));
    // Failing at an address since changed: the next claim gives the new one a fresh start.
    const moved = await company('Moved', 'https://moved.example/hook');
    await markFailing(await firstEndpointId(moved), 'https://old.example/hook');
    const two = await company('Two', 'https://two-a.example/hook');
    await addEndpointRow(cloud.ctx, two, 'https://two-b.example/hook');
    const three = await company('Three', 'https://three-a.example/hook');
    await markFailing(await addEndpointRow(cloud.ctx, three, 'https://three-b.example/hook'));
    await markFailing(await addEndpointRow(cloud.ctx, three, 'https://three-c.example/hook'));

    const client = await tokenConsole();
    const text = visibleText((await client.get('/console?q=Endpoint%20Health')).html);
    // Each company's line: its name, its facts, the events' words, then its state.
    for (const [name, words] of [
      ['None', 'Events: no callback address, nothing is sent'],
      ['Every Kind', 'Events: sent to its callback address, every kind'],
      ['Chosen Kinds', `Events: sent to its callback address, 2 kinds of ${CHOOSABLE_KINDS.length}`],
      ['Failing', 'Events: failing, nothing is sent until it is fixed or retried'],
      ['Moved', 'Events: sent to its callback address, every kind'],
      ['Two', 'Events: 2 endpoints, none failing'],
      ['Three', 'Events: 3 endpoints, 2 failing: nothing is sent to them until they are fixed or retried'],
    ] as const) {
      const start = text.indexOf(`Endpoint Health ${name} id`);
      expect(start, name).toBeGreaterThan(-1);
      expect(text.slice(start, text.indexOf(' Approved', start)).endsWith(` ${words}`), name).toBe(true);
    }
  });
});

describe("a company's page", () => {
  it('shows its members, and how its events fare with the newest attempts', async () => {
    const owner = await companyOwner(cloud, { name: 'Watched Couriers', email: 'watch@owner.example' });
    await enqueuePings(cloud.ctx, owner.companyId, 2);
    const client = await tokenConsole();
    let text = visibleText((await client.get(`/console/companies/${owner.companyId}`)).html);
    expect(text).toContain('watch@owner.example Owner');
    expect(text).toContain('No callback address: nothing is sent. 2 events are kept for about three days.');
    expect(text).toContain('No delivery attempts yet.');
    await setCallback(cloud.ctx, owner.companyId, 'http://127.0.0.1:9/hook');
    await deliverDue(cloud.ctx, { allowPrivateAddresses: true, random: () => 0.5 });
    text = visibleText((await client.get(`/console/companies/${owner.companyId}`)).html);
    expect(text).toContain('Sent to its callback address, every kind.');
    expect(text).toMatch(
      /http:\/\/127\.0\.0\.1:9\/hook Retrying after .* · 2 waiting, 1 of them retried · takes every kind/,
    );
    expect(text).toMatch(/ping to http:\/\/127\.0\.0\.1:9\/hook · attempt 1 · failed/);

    // A second endpoint, failing: each is told with its own state, and the line above says one of two fails.
    const second = await addEndpointRow(cloud.ctx, owner.companyId, 'https://second.example/hook', [
      'key.expired',
    ]);
    await markFailing(second);
    text = visibleText((await client.get(`/console/companies/${owner.companyId}`)).html);
    expect(text).toContain('2 endpoints, 1 failing: nothing is sent to it until it is fixed or retried.');
    expect(text).toMatch(
      /127\.0\.0\.1:9\/hook Retrying after .* · 2 waiting, 1 of them retried · takes every kind/,
    );
    expect(text).toMatch(
      /https:\/\/second\.example\/hook Failing since .* · 0 waiting, 0 of them retried · takes key\.expired, ping Last error: answered 500/,
    );
    const list = visibleText((await client.get(`/console?q=${owner.companyId}`)).html);
    expect(list).toContain(
      'Events: 2 endpoints, 1 failing: nothing is sent to it until it is fixed or retried',
    );
  });
});

describe('approving', () => {
  it('approves a pending company without a domain; the history says who and when', async () => {
    const { companyId } = await companyOwner(cloud, { name: 'Secret Mode Ltd' });
    const client = await tokenConsole();
    const page = await client.get(`/console/companies/${companyId}`);
    expect(visibleText(page.html)).toContain('No operator has acted on this company yet.');
    const approved = await client.post(`/console/companies/${companyId}/approve`);
    expect(approved.status).toBe(303);
    expect((await companyRow(companyId)).status).toBe('approved');
    const after = visibleText((await client.get(approved.location!)).html);
    expect(after).toContain('Approved. Its owner issues its secret in its area.');
    expect(after).toContain('operator token approved the company');
    expect(after).toMatch(/\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC/);
    const issued = await cloud.ops('POST', `/ops/companies/${companyId}/secret`);
    expect((await cloud.call('request', { org_id: companyId, secret: issued.body.secret })).status).toBe(200);
  });

  it('approves a domain company by pinning exactly the key it proved, and signed calls then work', async () => {
    const key = SigningKey.generate();
    const company = await provenCompany(key);
    const client = await tokenConsole();
    await client.get(`/console/companies/${company.companyId}`);
    const approved = await client.post(`/console/companies/${company.companyId}/approve`);
    expect(approved.status).toBe(303);
    const row = await companyRow(company.companyId);
    expect(row).toMatchObject({ status: 'approved', key_pub: key.publicKey.base64 });
    expect(row.key_pub).toBe(row.key_proven);
    const page = visibleText((await client.get(approved.location!)).html);
    expect(page).toContain(`Approved. The key pinned is ${key.publicKey.fingerprint}.`);
    expect(page).toContain(`operator token approved the company, pinning key ${key.publicKey.fingerprint}`);
    const call = await cloud.signedCall('request', { ref: 'pinned' }, { domain: company.domain, key });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
  });

  it('refuses the approval when the domain now serves another key than the one proved, and keeps the company waiting', async () => {
    const proved = SigningKey.generate();
    const company = await provenCompany(SigningKey.generate(), proved.publicKey.base64);
    const client = await tokenConsole();
    await client.get(`/console/companies/${company.companyId}`);
    const refused = await client.post(`/console/companies/${company.companyId}/approve`);
    expect(refused.status).toBe(502);
    expect(visibleText(refused.html)).toContain('The domain now publishes another key than the one checked');
    expect(await companyRow(company.companyId)).toMatchObject({ status: 'pending', key_pub: null });
    expect(visibleText(refused.html)).toContain('No operator has acted on this company yet.');
  });

  it('offers no approval to a domain company that proved nothing, and refuses one posted anyway', async () => {
    const owner = await companyOwner(cloud, { name: 'Unproven Ltd', domain: 'unproven.example' });
    keyFiles.publish('unproven.example', SigningKey.generate().publicKey.base64);
    const client = await tokenConsole();
    const page = await client.get(`/console/companies/${owner.companyId}`);
    expect(visibleText(page.html)).toContain('has not proved that it holds its domain');
    expect(page.html).not.toContain(`/console/companies/${owner.companyId}/approve`);
    const refused = await client.post(`/console/companies/${owner.companyId}/approve`);
    expect(refused.status).toBe(409);
    expect((await companyRow(owner.companyId)).status).toBe('pending');
  });

  it('refuses with domain_taken on the page when an approved company holds the domain', async () => {
    const real = await signatureCompany(cloud, keyFiles, 'taken.example');
    const squatter = await companyOwner(cloud, { name: 'Squatter Ltd', domain: 'taken.example' });
    const realKey = (await companyRow(real.id)).key_pub!;
    await cloud.ctx.db
      .updateTable('companies')
      .set({ key_published: realKey, key_proven: realKey })
      .where('id', '=', squatter.companyId)
      .execute();
    const client = await tokenConsole();
    await client.get(`/console/companies/${squatter.companyId}`);
    const refused = await client.post(`/console/companies/${squatter.companyId}/approve`);
    expect(refused.status).toBe(409);
    expect(visibleText(refused.html)).toContain('Another company already holds this domain');
    expect((await companyRow(squatter.companyId)).status).toBe('pending');
  });
});

describe('refusing, suspending and resuming', () => {
  it('refuses approval with a reason the company reads; a missing or overlong reason is asked again', async () => {
    const owner = await companyOwner(cloud, { name: 'Refused Ltd' });
    const client = await tokenConsole();
    await client.get(`/console/companies/${owner.companyId}`);
    const empty = await client.post(`/console/companies/${owner.companyId}/reject`, { reason: '  ' });
    expect(empty.status).toBe(400);
    expect(visibleText(empty.html)).toContain('Give the reason: the company reads it');
    const long = await client.post(`/console/companies/${owner.companyId}/reject`, {
      reason: 'x'.repeat(501),
    });
    expect(long.status).toBe(400);
    expect(visibleText(long.html)).toContain('Keep the reason to 500 characters');
    expect((await companyRow(owner.companyId)).status).toBe('pending');

    const reason = 'Your contact address bounces; give one that reaches you.';
    const refused = await client.post(`/console/companies/${owner.companyId}/reject`, { reason });
    expect(refused.status).toBe(303);
    expect(await companyRow(owner.companyId)).toMatchObject({ status: 'rejected', status_reason: reason });
    expect(visibleText((await owner.client.get(`/company/${owner.companyId}`)).html)).toContain(reason);
    const page = visibleText((await client.get(refused.location!)).html);
    expect(page).toContain('operator token refused approval');
    expect(page).toContain(reason);
  });

  it('suspends an approved company (its calls answer 403 org_not_approved) and resumes it (they work again)', async () => {
    const auth = await secretCompany(cloud, 'Suspended Couriers');
    expect((await cloud.call('request', auth)).status).toBe(200);
    const client = await tokenConsole();
    await client.get(`/console/companies/${auth.org_id}`);
    const suspended = await client.post(`/console/companies/${auth.org_id}/suspend`, {
      reason: 'Customers report openings nobody asked for.',
    });
    expect(suspended.status).toBe(303);
    const refused = await cloud.call('request', auth);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('org_not_approved');

    await client.get(suspended.location!);
    const resumed = await client.post(`/console/companies/${auth.org_id}/resume`);
    expect(resumed.status).toBe(303);
    expect((await cloud.call('request', auth)).status).toBe(200);

    const history = visibleText((await client.get(resumed.location!)).html);
    const lines = [
      'operator token resumed the company',
      'operator token suspended the company',
      'Customers report openings nobody asked for.',
      'operator API issued a secret',
      'operator API approved the company',
      'operator API added the company',
    ];
    const positions = lines.map((line) => history.indexOf(line));
    expect(
      positions.every((position) => position >= 0),
      history,
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('refuses a change the state does not allow, on the page', async () => {
    const auth = await secretCompany(cloud, 'Running Ltd');
    const client = await tokenConsole();
    await client.get(`/console/companies/${auth.org_id}`);
    const resumed = await client.post(`/console/companies/${auth.org_id}/resume`);
    expect(resumed.status).toBe(409);
    expect(visibleText(resumed.html)).toContain(
      'Only a company suspended can be resumed; this one is approved.',
    );
  });
});

describe('operator accounts', () => {
  it('the token grants rights by confirmed address; the account opens the console with its own session, acts under its name, and loses it at withdrawal', async () => {
    const ann = await account('Ann Operator', 'ann@ops.example');
    await account('Unconfirmed Ulf', 'ulf@ops.example', false);
    const token = await tokenConsole();
    await token.get('/console/operators');
    const unconfirmed = await token.post('/console/operators', { email: 'ulf@ops.example' });
    expect(unconfirmed.status).toBe(404);
    expect(visibleText(unconfirmed.html)).toContain('No Gatelink account has confirmed this address');
    const granted = await token.post('/console/operators', { email: ' Ann@Ops.example ' });
    expect(granted.status).toBe(200);
    expect(visibleText(granted.html)).toContain(
      'Ann Operator is now an operator: they sign in at /signin with their own passkey and open /console.',
    );

    const page = await ann.client.get('/console');
    expect(page.status).toBe(200);
    expect(visibleText(page.html)).toContain('Signed in as Ann Operator <ann@ops.example>');
    const { companyId } = await companyOwner(cloud, { name: 'Approved By Ann Ltd' });
    await ann.client.get(`/console/companies/${companyId}`);
    const approved = await ann.client.post(`/console/companies/${companyId}/approve`);
    expect(approved.status).toBe(303);
    expect(visibleText((await ann.client.get(approved.location!)).html)).toContain(
      'Ann Operator <ann@ops.example> approved the company',
    );
    const action = await cloud.ctx.db
      .selectFrom('operator_actions')
      .selectAll()
      .where('company_id', '=', companyId)
      .executeTakeFirstOrThrow();
    expect(action).toMatchObject({ customer_id: ann.id, action: 'approve' });

    await ann.client.get('/console/operators');
    const annGrants = await ann.client.post('/console/operators', { email: 'carl@example.com' });
    expect(annGrants.status).toBe(403);
    expect(visibleText(annGrants.html)).toContain('Only a console signed in with the operator token');

    await token.get('/console/operators');
    const withdrawn = await token.post(`/console/operators/${ann.id}/withdraw`);
    expect(withdrawn.status).toBe(303);
    const list = visibleText((await token.get('/console/operators')).html);
    expect(list).toContain('operator token withdrew operator rights from Ann Operator <ann@ops.example>');
    expect(list).toContain('operator token gave operator rights to Ann Operator <ann@ops.example>');
    refusedToOperatorsOnly(await ann.client.get('/console'));
  });
});

describe('the operator API', () => {
  it('records what it does as "operator API", refuses with a reason and resumes', async () => {
    const created = await cloud.ops('POST', '/ops/companies', { name: 'API Ltd' });
    const id = (created.body.company as { id: number }).id;
    expect((await cloud.ops('POST', `/ops/companies/${id}/reject`, {})).status).toBe(400);
    const rejected = await cloud.ops('POST', `/ops/companies/${id}/reject`, { reason: 'Unknown to us.' });
    expect(rejected.body.company).toMatchObject({ status: 'rejected' });
    expect((await cloud.ops('POST', `/ops/companies/${id}/approve`)).status).toBe(409);

    const other = await secretCompany(cloud, 'API Suspended Ltd');
    expect(
      (await cloud.ops('POST', `/ops/companies/${other.org_id}/suspend`, { reason: 'Unpaid.' })).status,
    ).toBe(200);
    expect((await cloud.ops('POST', `/ops/companies/${other.org_id}/resume`)).body.company).toMatchObject({
      status: 'approved',
    });
    const shown = await cloud.ops('GET', `/ops/companies/${other.org_id}`);
    const actions = shown.body.actions as {
      operator: string;
      action: string;
      reason: string | null;
      at: string;
    }[];
    expect(actions.map((action) => action.action)).toEqual(['resume', 'suspend', 'secret', 'approve', 'add']);
    expect(actions.every((action) => action.operator === 'operator API')).toBe(true);
    expect(actions[1]!.reason).toBe('Unpaid.');
    expect(Date.parse(actions[0]!.at)).toBe(clock.now().getTime());
  });
});

describe('gatelink-admin', () => {
  function admin(args: string[]): Promise<ProgramRun> {
    const root = resolve(import.meta.dirname, '../..');
    const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
    const argv = [
      resolve(root, 'bin/gatelink-admin.mjs'),
      '--url',
      cloud.baseUrl,
      '--token',
      cloud.operatorToken,
    ];
    return runProgram([...argv, ...args], { cwd: root, env });
  }

  it('company reject ID --reason R refuses a pending company, company resume ID lets a suspended one call again', async () => {
    const pending = await companyOwner(cloud, { name: 'CLI Pending Ltd' });
    const noReason = await admin(['company', 'reject', String(pending.companyId)]);
    expect(noReason.code).not.toBe(0);
    expect(noReason.stderr).toContain('--reason');
    const rejected = await admin([
      'company',
      'reject',
      String(pending.companyId),
      '--reason',
      'No such firm.',
    ]);
    expect(rejected, rejected.stderr).toMatchObject({ code: 0 });
    expect(await companyRow(pending.companyId)).toMatchObject({
      status: 'rejected',
      status_reason: 'No such firm.',
    });

    const auth = await secretCompany(cloud, 'CLI Suspended Ltd');
    expect((await admin(['company', 'suspend', String(auth.org_id), '--reason', 'Unpaid.'])).code).toBe(0);
    expect((await cloud.call('request', auth)).status).toBe(403);
    const resumed = await admin(['company', 'resume', String(auth.org_id)]);
    expect(resumed, resumed.stderr).toMatchObject({ code: 0 });
    expect(resumed.stdout).toContain('approved again');
    expect((await cloud.call('request', auth)).status).toBe(200);
  });
});
