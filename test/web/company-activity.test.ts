import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedAddress } from '../../cloud/links/outbound-http/safe-connection.js';
import { approve, reject } from '../../cloud/rules/companies/review.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { OPERATOR_TOKEN } from '../../cloud/rules/operators/actions.js';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { EVENT_EXAMPLES } from '../../shared/company-api/events.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runProgram } from '../support/program-run.js';

/**
 * A company's record of who did what (docs/design.md section 11.8): every change a member makes from the company
 * area is written with the change, named after the member and shown on the Activity page, newest first, beside
 * Gatelink's decisions on the company; what was refused or changed nothing is not written; the console shows
 * the same lines.
 */
const clock = new FakeClock(Date.parse('2026-03-10T08:00:00Z'));
const resolveHost = async (): Promise<ResolvedAddress[]> => [{ address: '93.184.215.14', family: 4 }];
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, resolveHost });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function member(owner: CompanyOwner, name: string, email: string, role: 'member' | 'viewer') {
  await owner.client.get(`/company/${owner.companyId}/members`);
  await owner.client.post(`/company/${owner.companyId}/members`, { email, role });
  const customer = await createCustomer(cloud.ctx, { displayName: name, email });
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email_verified_at: clock.now() })
    .where('id', '=', customer.id)
    .execute();
  const client = await BrowserClient.signedIn(cloud, customer.id);
  await client.get('/company');
  return client;
}

async function recorded(companyId: number) {
  return cloud.ctx.db
    .selectFrom('member_actions')
    .select(['member', 'action', 'detail'])
    .where('company_id', '=', companyId)
    .orderBy('id')
    .execute();
}

/** The Activity page's lines of members' actions, newest first, as read. */
async function activityLines(client: BrowserClient, companyId: number, query = ''): Promise<string[]> {
  const page = await client.get(`/company/${companyId}/activity${query}`);
  expect(page.status).toBe(200);
  const card =
    /<section[^>]*aria-labelledby="member-actions-heading"[\s\S]*?<\/section>/.exec(page.html)?.[0] ?? '';
  return [...card.matchAll(/<li[^>]*>([\s\S]*?)<\/li>/g)].map((match) => visibleText(match[1]!));
}

describe('the activity page', () => {
  it('names who did each change, newest first, with the time in the reader’s zone, and Gatelink’s decisions', async () => {
    const owner = await companyOwner(cloud, { name: 'Record Couriers', email: 'olga@example.com' });
    const base = `/company/${owner.companyId}`;
    const olga = 'Owner <olga@example.com>';
    await owner.client.get(base);
    clock.advance(60_000);
    await owner.client.post(`${base}/details`, {
      name: 'Record Couriers Ltd',
      contact_email: 'ops@example.com',
      domain: '',
    });
    await reject(cloud.ctx, owner.companyId, OPERATOR_TOKEN, 'Name the legal entity.');
    await owner.client.get(base);
    await owner.client.post(`${base}/ask-again`);
    await approve(cloud.ctx, owner.companyId, OPERATOR_TOKEN, { proofRequired: false });

    clock.advance(60_000);
    const access = await owner.client.get(`${base}/access`);
    const replaces = /name="replaces" value="(\d+)"/.exec(access.html)![1]!;
    const issued = await owner.client.post(`${base}/access/secret`, { replaces });
    const secret = /glsk_[A-Za-z0-9_-]{40,}/.exec(issued.html)![0];
    await owner.client.get(`${base}/callback`);
    await owner.client.post(`${base}/callback`, { callback_url: 'https://hooks.example.com/gatelink' });
    const dora = await member(owner, 'Dora', 'dora@example.com', 'member');
    clock.advance(60_000);
    // "Retry now" shows only while an endpoint is failing or retrying: the form is sent as its page would.
    const endpoint = /href="\/company\/\d+\/callback\/(\d+)"/;
    await dora.get(`${base}/events`);
    await dora.post(`${base}/events/test`);
    const events = await dora.get(`${base}/events`);
    await dora.post(`${base}/events/retry`, { endpoint: endpoint.exec(events.html)![1]! });
    const doraRow = await cloud.ctx.db
      .selectFrom('company_members')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .where('email', '=', 'dora@example.com')
      .executeTakeFirstOrThrow();
    await owner.client.get(`${base}/members`);
    await owner.client.post(`${base}/members/${doraRow.id}/role`, { role: 'viewer' });
    await owner.client.post(`${base}/members/${doraRow.id}/remove`);

    const event = await cloud.ctx.db
      .selectFrom('events')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .executeTakeFirstOrThrow();
    expect(
      (await recorded(owner.companyId)).map((row) =>
        `${row.member} ${row.action} ${row.detail ?? ''}`.trim(),
      ),
    ).toEqual([
      `${olga} registered Record Couriers`,
      `${olga} details the name to Record Couriers Ltd`,
      `${olga} asked-again`,
      `${olga} secret-issued …${secret.slice(-4)}`,
      `${olga} endpoint-added https://hooks.example.com/gatelink`,
      `${olga} member-added dora@example.com as developer`,
      `Dora <dora@example.com> test-event ${event.id}`,
      'Dora <dora@example.com> retry-now 1 waiting event at https://hooks.example.com/gatelink',
      `${olga} member-role dora@example.com a viewer`,
      `${olga} member-removed dora@example.com`,
    ]);

    // The reader in Tokyo (+09:00) reads 08:03 UTC as 17:03.
    await cloud.ctx.db
      .updateTable('customers')
      .set({ time_zone: 'Asia/Tokyo' })
      .where('id', '=', owner.customerId)
      .execute();
    const lines = await activityLines(owner.client, owner.companyId);
    expect(lines[0]).toMatch(/^Owner <olga@example\.com> removed dora@example\.com .*17:03/);
    expect(lines[2]).toContain(
      'Dora <dora@example.com> pressed Retry now, for 1 waiting event at https://hooks.example.com/gatelink',
    );
    expect(lines.at(-1)).toMatch(/^Owner <olga@example\.com> registered the company Record Couriers .*17:00/);
    const page = visibleText((await owner.client.get(`${base}/activity`)).html);
    expect(page).toContain('Times are in Asia/Tokyo');
    expect(page).toContain('Gatelink approved the company');
    expect(page).toContain('Gatelink refused approval');
    expect(page).toContain('Name the legal entity.');
    // The company reads Gatelink, never which operator or how they signed in; the secret never shows whole.
    expect(page).not.toContain('operator token');
    expect(page).not.toContain(secret);
  });

  it('says what a member did to each endpoint, naming its address', async () => {
    const owner = await companyOwner(cloud, { name: 'Endpoint Couriers', email: 'eve@example.com' });
    const base = `/company/${owner.companyId}`;
    await owner.client.get(`${base}/callback`);
    const added = await owner.client.post(`${base}/callback`, {
      callback_url: 'https://hooks.example.com/a',
    });
    const path = /action="(\/company\/\d+\/callback\/(\d+))\/kinds"/.exec(added.html)!;
    const [, endpoint, endpointId] = path as unknown as [string, string, string];
    await owner.client.post(endpoint, { callback_url: 'https://hooks.example.com/b' });
    await owner.client.post(`${endpoint}/kinds`, { take: 'these', kinds: ['open.succeeded', 'open.failed'] });
    const replaces = /name="replaces" value="(\d+)"/.exec((await owner.client.get(endpoint)).html)![1]!;
    const rotated = await owner.client.post(`${endpoint}/signing-secret`, { replaces });
    const hint = /whsec_[A-Za-z0-9+/]{43}=/.exec(rotated.html)![0].slice(-4);
    await owner.client.get(`${base}/events`);
    await owner.client.post(`${base}/events/test`);
    await owner.client.post(`${base}/events/retry`, { endpoint: endpointId });
    // An event of a kind it does not take, sent to it anyway.
    const issued = await cloud.ctx.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        companyId: owner.companyId,
        type: 'request.issued',
        at: clock.now(),
        data: EVENT_EXAMPLES['request.issued'].data,
      }),
    );
    expect(
      (await owner.client.post(`${base}/events/${issued}/resend`, { endpoint: endpointId })).status,
    ).toBe(303);
    await owner.client.post(`${endpoint}/remove`);

    const eve = 'Owner <eve@example.com>';
    const lines = (await activityLines(owner.client, owner.companyId)).map((line) =>
      line.replace(/ \d+ \w{3} \d{4}, .*$/, ''),
    );
    expect(lines.slice(0, -1)).toEqual([
      `${eve} removed the callback address https://hooks.example.com/b`,
      `${eve} sent an event again ${issued} to https://hooks.example.com/b`,
      `${eve} pressed Retry now, for 1 waiting event at https://hooks.example.com/b`,
      expect.stringMatching(new RegExp(`^${eve} sent a test event [0-9a-f-]{36}$`)),
      `${eve} made a signing secret …${hint} for https://hooks.example.com/b`,
      `${eve} chose the kinds of event the callback takes: open.succeeded, open.failed, at https://hooks.example.com/b`,
      `${eve} set the callback address to https://hooks.example.com/b (was https://hooks.example.com/a)`,
      `${eve} added the callback address https://hooks.example.com/a`,
    ]);
  });

  it('writes nothing for what was refused or changed nothing: a viewer’s forms, a form sent twice, a stranger', async () => {
    const owner = await companyOwner(cloud, { name: 'Quiet Couriers' });
    const base = `/company/${owner.companyId}`;
    await approve(cloud.ctx, owner.companyId, OPERATOR_TOKEN, { proofRequired: false });
    const vera = await member(owner, 'Vera', 'vera@example.com', 'viewer');
    const before = await recorded(owner.companyId);
    expect(before.map((row) => row.action)).toEqual(['registered', 'member-added']);

    await vera.get(`${base}/callback`);
    expect(
      (await vera.post(`${base}/callback`, { callback_url: 'https://hooks.example.com/x' })).status,
    ).toBe(403);
    expect((await vera.post(`${base}/logo/remove`)).status).toBe(403);
    // The owner's own forms that change nothing: no logo to remove, the same details, a member already there,
    // a secret form sent twice, a member that does not exist.
    await owner.client.get(`${base}/logo`);
    await owner.client.post(`${base}/logo/remove`);
    await owner.client.get(base);
    await owner.client.post(`${base}/details`, {
      name: 'Quiet Couriers',
      contact_email: 'ops@example.com',
      domain: '',
    });
    await owner.client.get(`${base}/members`);
    await owner.client.post(`${base}/members`, { email: 'vera@example.com' });
    expect((await owner.client.post(`${base}/members/999999/remove`)).status).toBe(404);
    const access = await owner.client.get(`${base}/access`);
    const replaces = /name="replaces" value="(\d+)"/.exec(access.html)![1]!;
    expect((await owner.client.post(`${base}/access/secret`, { replaces })).status).toBe(200);
    expect((await owner.client.post(`${base}/access/secret`, { replaces })).status).toBe(409);
    // An address refused when saved leaves no line either.
    await owner.client.get(`${base}/callback`);
    expect(
      (await owner.client.post(`${base}/callback`, { callback_url: 'http://hooks.example.com/x' })).status,
    ).toBe(400);

    expect((await recorded(owner.companyId)).map((row) => row.action)).toEqual([
      'registered',
      'member-added',
      'secret-issued',
    ]);
    // A viewer reads the page; a member of another company gets the 404 of a company that does not exist.
    expect(await activityLines(vera, owner.companyId)).toHaveLength(3);
    const stranger = await companyOwner(cloud, { name: 'Stranger Couriers' });
    expect((await stranger.client.get(`${base}/activity`)).status).toBe(404);
  });

  it('pages through a long record, 50 lines a page', async () => {
    const owner = await companyOwner(cloud, { name: 'Busy Couriers' });
    const base = `/company/${owner.companyId}`;
    await member(owner, 'Ivo', 'ivo@example.com', 'member');
    const ivo = await cloud.ctx.db
      .selectFrom('company_members')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .where('email', '=', 'ivo@example.com')
      .executeTakeFirstOrThrow();
    await owner.client.get(`${base}/members`);
    for (let turn = 0; turn < 58; turn++) {
      await owner.client.post(`${base}/members/${ivo.id}/role`, {
        role: turn % 2 === 0 ? 'viewer' : 'member',
      });
    }
    const first = await activityLines(owner.client, owner.companyId);
    expect(first).toHaveLength(50);
    expect(first[0]).toContain('made ivo@example.com a developer');
    const page = await owner.client.get(`${base}/activity`);
    const older = /href="([^"]*before=\d+)"/.exec(page.html)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toBeDefined();
    const second = await activityLines(owner.client, owner.companyId, older!.slice(older!.indexOf('?')));
    expect(second).toHaveLength(10);
    expect(second.at(-1)).toContain('registered the company Busy Couriers');
    expect(visibleText((await owner.client.get(older!)).html)).not.toContain("Gatelink's decisions");
  });

  it('shows the members’ newest actions on the company’s console page, operators named there', async () => {
    const owner = await companyOwner(cloud, { name: 'Console Couriers', email: 'cleo@example.com' });
    await approve(cloud.ctx, owner.companyId, OPERATOR_TOKEN, { proofRequired: false });
    await owner.client.get(`/company/${owner.companyId}/members`);
    await owner.client.post(`/company/${owner.companyId}/members`, {
      email: 'max@example.com',
      role: 'viewer',
    });
    const console = new BrowserClient(cloud.app);
    console.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
    const page = visibleText((await console.get(`/console/companies/${owner.companyId}`)).html);
    expect(page).toContain('What members did');
    expect(page).toContain('Owner <cleo@example.com> added max@example.com as viewer');
    expect(page).toContain('Owner <cleo@example.com> registered the company Console Couriers');
    expect(page).toContain('operator token approved the company');
    // gatelink-admin prints them in the same words, and the operator API answers them.
    const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
    const root = resolve(import.meta.dirname, '../..');
    const admin = resolve(root, 'bin/gatelink-admin.mjs');
    const args = [
      '--url',
      cloud.baseUrl,
      '--token',
      cloud.operatorToken,
      'company',
      'show',
      String(owner.companyId),
    ];
    const shownByCli = await runProgram([admin, ...args], { cwd: root, env });
    expect(shownByCli, shownByCli.stderr).toMatchObject({ code: 0 });
    expect(shownByCli.stdout).toContain(`Company ${owner.companyId} "Console Couriers": approved`);
    expect(shownByCli.stdout).toMatch(/operator token +approve/);
    expect(shownByCli.stdout).toContain('Owner <cleo@example.com> added max@example.com as viewer');

    const shown = await cloud.ops('GET', `/ops/companies/${owner.companyId}`);
    expect(shown.body.member_actions).toEqual([
      {
        at: clock.now().toISOString(),
        member: 'Owner <cleo@example.com>',
        action: 'member-added',
        detail: 'max@example.com as viewer',
        sandbox: false,
      },
      {
        at: clock.now().toISOString(),
        member: 'Owner <cleo@example.com>',
        action: 'registered',
        detail: 'Console Couriers',
        sandbox: false,
      },
    ]);
  });
});
