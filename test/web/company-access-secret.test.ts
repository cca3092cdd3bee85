import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A company without a domain and its secrets (docs/design.md section 11.2): issued and shown once on the
 * answer to the form, used for calls, rotated with the old one working 24 more hours; never shown on a GET,
 * and never issued twice by the same form sent twice.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

const text = visibleText;
const accessPath = (owner: CompanyOwner) => `/company/${owner.companyId}/access`;
const SECRET = /glsk_[A-Za-z0-9_-]{40,}/g;

/** Sends the secret form as the page last loaded has it; returns the answer and the secret it shows, if any. */
async function issue(owner: CompanyOwner, html: string) {
  const replaces = /name="replaces" value="(\d+)"/.exec(html)?.[1];
  expect(replaces).toBeDefined();
  const answer = await owner.client.post(`${accessPath(owner)}/secret`, { replaces: replaces! });
  return { answer, secret: answer.html.match(SECRET)?.[0] };
}

/** The company's secret in use, or the one retiring, as stored. */
function secretRow(owner: CompanyOwner, which: 'in use' | 'retiring') {
  return cloud.ctx.db
    .selectFrom('company_secrets')
    .select('id')
    .where('company_id', '=', owner.companyId)
    .where('retires_at', which === 'in use' ? 'is' : 'is not', null)
    .executeTakeFirstOrThrow();
}

describe('a company without a domain', () => {
  it('issues a secret, calls with it, rotates it: the old one works for 24 h, then stops', async () => {
    const owner = await companyOwner(cloud, { name: 'Bike Couriers' });
    await approveDirectly(cloud, owner.companyId);
    const empty = await owner.client.get(accessPath(owner));
    expect(text(empty.html)).toContain('You have no secret yet.');
    expect(text(empty.html)).toContain(`"org_id":${owner.companyId},"secret":"<your secret>"`);

    const first = await issue(owner, empty.html);
    expect(first.answer.status).toBe(200);
    expect(first.answer.headers['cache-control']).toBe('no-store');
    expect(text(first.answer.html)).toContain('it is shown only this once');
    const old = { org_id: owner.companyId, secret: first.secret! };
    const created = await cloud.call('request', { ...old, ref: 'ORD-1' });
    expect(created.status).toBe(200);
    expect((await cloud.call('status', { ...old, code: created.body.code })).body.state).toBe('new');

    const listed = await owner.client.get(accessPath(owner));
    expect(text(listed.html)).toContain(`glsk_…${old.secret.slice(-4)} In use`);
    const second = await issue(owner, listed.html);
    expect(second.secret).toBeDefined();
    expect(second.secret).not.toBe(old.secret);
    const fresh = { org_id: owner.companyId, secret: second.secret! };
    expect(text(second.answer.html)).toContain('(24 h 0 min left)');

    clock.advance(22 * HOUR + 30 * 60 * 1000);
    expect(text((await owner.client.get(accessPath(owner))).html)).toContain('(1 h 30 min left)');
    expect((await cloud.call('request', old)).status).toBe(200);
    clock.advance(90 * 60 * 1000);
    expect((await cloud.call('request', old)).body.error).toBe('bad_secret');
    expect((await cloud.call('request', fresh)).status).toBe(200);
    const after = text((await owner.client.get(accessPath(owner))).html);
    expect(after).not.toContain(`glsk_…${old.secret.slice(-4)}`);
    expect(after).toContain(`glsk_…${fresh.secret.slice(-4)} In use`);
  });

  it('expires a replaced secret at once (a leaked one), asking first; the one in use cannot be expired so', async () => {
    const owner = await companyOwner(cloud, { name: 'Leaky Ltd' });
    await approveDirectly(cloud, owner.companyId);
    const leaked = {
      org_id: owner.companyId,
      secret: (await issue(owner, (await owner.client.get(accessPath(owner))).html)).secret!,
    };
    const listed = await owner.client.get(accessPath(owner));
    expect(listed.html).toContain('data-confirm="Rotate the secret?');
    const fresh = { org_id: owner.companyId, secret: (await issue(owner, listed.html)).secret! };
    expect((await cloud.call('request', leaked)).status).toBe(200);

    const page = await owner.client.get(accessPath(owner));
    const expire = /action="([^"]+\/secret\/(\d+)\/expire)"/.exec(page.html);
    expect(expire).not.toBeNull();
    expect(page.html).toContain(`data-confirm="End the old secret …${leaked.secret.slice(-4)} now?`);
    const ended = await owner.client.post(expire![1]!);
    expect(ended.status).toBe(303);
    const after = await owner.client.get(ended.location!);
    expect(text(after.html)).toContain('The old secret no longer works');
    expect(text(after.html)).not.toContain(`glsk_…${leaked.secret.slice(-4)}`);
    expect((await cloud.call('request', leaked)).body.error).toBe('bad_secret');
    expect((await cloud.call('request', fresh)).status).toBe(200);

    // Sent again, or naming the secret in use: nothing more ends, and the company keeps its secret.
    expect((await owner.client.post(expire![1]!)).status).toBe(409);
    const current = await secretRow(owner, 'in use');
    const refused = await owner.client.post(`${accessPath(owner)}/secret/${current.id}/expire`);
    expect(refused.status).toBe(409);
    expect((await cloud.call('request', fresh)).status).toBe(200);
  });

  it('[attack:web.secret-expired-by-another-company] a member of another company cannot end a secret', async () => {
    const owner = await companyOwner(cloud, { name: 'Target Ltd' });
    await approveDirectly(cloud, owner.companyId);
    const first = (await issue(owner, (await owner.client.get(accessPath(owner))).html)).secret!;
    await issue(owner, (await owner.client.get(accessPath(owner))).html);
    const retiring = await secretRow(owner, 'retiring');
    const stranger = await companyOwner(cloud, { name: 'Stranger Ltd' });
    await stranger.client.get(`/company/${stranger.companyId}/access`);
    expect((await stranger.client.post(`${accessPath(owner)}/secret/${retiring.id}/expire`)).status).toBe(
      404,
    );
    const own = await stranger.client.post(
      `/company/${stranger.companyId}/access/secret/${retiring.id}/expire`,
    );
    expect(own.status).toBe(409);
    expect((await cloud.call('request', { org_id: owner.companyId, secret: first })).status).toBe(200);
  });

  it('[attack:web.secret-shown-twice] a secret is never on a GET, and the same form sent again shows and issues nothing', async () => {
    const owner = await companyOwner(cloud, { name: 'Reload Ltd' });
    await approveDirectly(cloud, owner.companyId);
    const page = await owner.client.get(accessPath(owner));
    const issued = await issue(owner, page.html);
    const secret = issued.secret!;

    const again = await issue(owner, page.html);
    expect(again.answer.status).toBe(409);
    expect(again.secret).toBeUndefined();
    expect(text(again.answer.html)).toContain('the secret it issued was shown once and is not shown again');
    const reload = await owner.client.get(accessPath(owner));
    expect(reload.html).not.toContain(secret);
    expect(reload.html.match(SECRET)).toBeNull();
    const rows = await cloud.ctx.db
      .selectFrom('company_secrets')
      .selectAll()
      .where('company_id', '=', owner.companyId)
      .execute();
    expect(rows).toHaveLength(1);
    expect((await cloud.call('request', { org_id: owner.companyId, secret })).status).toBe(200);
  });

  it('a pending company may issue a secret, told that calls wait for approval', async () => {
    const owner = await companyOwner(cloud, { name: 'Waiting Ltd' });
    const page = await owner.client.get(accessPath(owner));
    expect(text(page.html)).toContain('calls with it are refused with org_not_approved');
    const { secret } = await issue(owner, page.html);
    const refused = await cloud.call('request', { org_id: owner.companyId, secret });
    expect(refused.body.error).toBe('org_not_approved');
    await approveDirectly(cloud, owner.companyId);
    expect((await cloud.call('request', { org_id: owner.companyId, secret })).status).toBe(200);
  });

  it('a company with a domain has no secret form, and posting one is refused', async () => {
    const owner = await companyOwner(cloud, { name: 'Domain Ltd', domain: 'domain-ltd.example' });
    const page = await owner.client.get(accessPath(owner));
    expect(page.html).not.toContain('name="replaces"');
    const refused = await owner.client.post(`${accessPath(owner)}/secret`, { replaces: '0' });
    expect(refused.status).toBe(403);
  });
});
