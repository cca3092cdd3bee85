import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANY_CACHE_MS } from '../../cloud/rules/call-auth/company-cache.js';
import { FakeClock } from '../support/clock.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** Secret mode (docs/design.md section 2; cloud/README.md, "Secret (companies without a domain)") for companies without a domain. */

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

function expectRefused(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error: code });
  expect(answer.body.message).toBeTypeOf('string');
}

async function createdCompany(body: { name: string; domain?: string }): Promise<number> {
  const created = await cloud.ops('POST', '/ops/companies', body);
  expect(created.status).toBe(200);
  return (created.body.company as { id: number }).id;
}

async function issueSecret(id: number): Promise<Answer> {
  return cloud.ops('POST', `/ops/companies/${id}/secret`);
}

describe('secret mode', () => {
  it('the happy path: request and status with org_id and secret', async () => {
    const auth = await secretCompany(cloud, 'Happy Ltd');
    const created = await cloud.call('request', { ...auth, ref: 'ORD-7' });
    expect(created.status).toBe(200);
    const status = await cloud.call('status', { ...auth, code: created.body.code });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ code: created.body.code, state: 'new', ref: 'ORD-7' });
  });

  it('[attack:auth.secret-guess] a wrong secret answers 401 bad_secret', async () => {
    const auth = await secretCompany(cloud, 'Wrong Secret Ltd');
    const wrong = `${auth.secret.slice(0, -1)}${auth.secret.endsWith('A') ? 'B' : 'A'}`;
    expectRefused(await cloud.call('request', { ...auth, secret: wrong }), 401, 'bad_secret');
    expectRefused(await cloud.call('request', { ...auth, secret: '' }), 401, 'bad_secret');
  });

  it("another company's secret answers 401 bad_secret", async () => {
    const first = await secretCompany(cloud, 'First Ltd');
    const second = await secretCompany(cloud, 'Second Ltd');
    expectRefused(
      await cloud.call('request', { org_id: first.org_id, secret: second.secret }),
      401,
      'bad_secret',
    );
  });

  it('a burst after the cache expired answers each call by its own secret', async () => {
    const auth = await secretCompany(cloud, 'Burst Ltd');
    expect((await cloud.call('request', { ...auth })).status).toBe(200);
    clock.advance(COMPANY_CACHE_MS);
    const wrong = `${auth.secret.slice(0, -4)}${auth.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    // The calls miss together and share the company's read; each is still judged by what it presented.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        cloud.call('request', {
          ...auth,
          secret: i % 3 === 0 ? wrong : auth.secret,
        }),
      ),
    );
    expect(answers.map((answer) => answer.body.error ?? answer.status)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 'bad_secret' : 200)),
    );
  });

  it('an unknown org_id answers 401 unknown_org', async () => {
    const auth = await secretCompany(cloud, 'Known Ltd');
    expectRefused(await cloud.call('request', { ...auth, org_id: 2_000_000_000 }), 401, 'unknown_org');
  });

  it('[attack:auth.secret-leak] the secret carries the glsk_ prefix and 32 or more random bytes', async () => {
    const first = await secretCompany(cloud, 'Prefix Ltd');
    const second = await secretCompany(cloud, 'Prefix Two Ltd');
    for (const { secret } of [first, second]) {
      expect(secret).toMatch(/^glsk_[A-Za-z0-9_-]+$/);
      expect(Buffer.from(secret.slice('glsk_'.length), 'base64url').length).toBeGreaterThanOrEqual(32);
    }
    expect(first.secret).not.toBe(second.secret);
  });

  it('[attack:auth.secret-leak] the secret is not stored in plain text', async () => {
    const auth = await secretCompany(cloud, 'Hashed Ltd');
    const rows = await cloud.ctx.db
      .selectFrom('company_secrets')
      .selectAll()
      .where('company_id', '=', auth.org_id)
      .execute();
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(auth.secret);
    expect(stored).not.toContain(auth.secret.slice('glsk_'.length));
    expect(rows[0]!.hash).not.toBe(auth.secret);
    expect(rows[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the operator sees the secret once: issuing again gives a new one', async () => {
    const id = await createdCompany({ name: 'Once Ltd' });
    const first = await issueSecret(id);
    const second = await issueSecret(id);
    expect(first.body.secret).not.toBe(second.body.secret);
    const listed = await cloud.ops('GET', `/ops/companies/${id}`);
    expect(JSON.stringify(listed.body)).not.toContain(first.body.secret as string);
    expect(JSON.stringify(listed.body)).not.toContain(second.body.secret as string);
  });

  it('rotation: the old secret works for 24 h after a new one is issued, then answers bad_secret', async () => {
    const old = await secretCompany(cloud, 'Rotation Ltd');
    const issued = await issueSecret(old.org_id);
    expect(issued.status).toBe(200);
    const fresh = { org_id: old.org_id, secret: issued.body.secret as string };
    expect(issued.body.previous_valid_until).toBe(new Date(clock.now().getTime() + 24 * HOUR).toISOString());

    expect((await cloud.call('request', { ...old })).status).toBe(200);
    expect((await cloud.call('request', { ...fresh })).status).toBe(200);
    clock.advance(24 * HOUR - 1000);
    expect((await cloud.call('request', { ...old })).status).toBe(200);
    clock.advance(1000);
    expectRefused(await cloud.call('request', { ...old }), 401, 'bad_secret');
    expect((await cloud.call('request', { ...fresh })).status).toBe(200);
  });

  it('a third secret retires the first at once if its 24 h have passed, and keeps the second for 24 h', async () => {
    const first = await secretCompany(cloud, 'Three Secrets Ltd');
    const second = (await issueSecret(first.org_id)).body.secret as string;
    clock.advance(25 * HOUR);
    const third = (await issueSecret(first.org_id)).body.secret as string;
    expectRefused(await cloud.call('request', { ...first }), 401, 'bad_secret');
    expect((await cloud.call('request', { org_id: first.org_id, secret: second })).status).toBe(200);
    expect((await cloud.call('request', { org_id: first.org_id, secret: third })).status).toBe(200);
    clock.advance(24 * HOUR);
    expectRefused(await cloud.call('request', { org_id: first.org_id, secret: second }), 401, 'bad_secret');
    expect((await cloud.call('request', { org_id: first.org_id, secret: third })).status).toBe(200);
  });

  it('[attack:auth.secret-after-domain] a company with a domain using a secret answers 403 secret_disabled', async () => {
    const id = await createdCompany({ name: 'Domain Ltd', domain: 'domain-ltd.example' });
    expectRefused(
      await cloud.call('request', { org_id: id, secret: 'glsk_anything' }),
      403,
      'secret_disabled',
    );
    // The operator cannot issue one either.
    expectRefused(await issueSecret(id), 403, 'secret_disabled');
  });

  it('[attack:auth.secret-after-domain] a company that sets a domain can no longer use its secret', async () => {
    const auth = await secretCompany(cloud, 'Later Domain Ltd');
    expect((await cloud.call('request', { ...auth })).status).toBe(200);
    // Set from outside this instance, as another instance would: seen once its cached answer expires.
    await cloud.ctx.db
      .updateTable('companies')
      .set({ domain: 'later-domain.example' })
      .where('id', '=', auth.org_id)
      .execute();
    clock.advance(COMPANY_CACHE_MS);
    expectRefused(await cloud.call('request', { ...auth }), 403, 'secret_disabled');
  });

  it('[attack:auth.unapproved-company] a pending company answers 403 org_not_approved', async () => {
    const id = await createdCompany({ name: 'Pending Ltd' });
    const secret = (await issueSecret(id)).body.secret as string;
    expectRefused(await cloud.call('request', { org_id: id, secret }), 403, 'org_not_approved');
    // Without the right secret, nothing about the company is told.
    expectRefused(await cloud.call('request', { org_id: id, secret: 'glsk_wrong' }), 401, 'bad_secret');
  });

  it('[attack:auth.unapproved-company] a suspended company answers 403 org_not_approved', async () => {
    const auth = await secretCompany(cloud, 'Suspended Ltd');
    expect((await cloud.call('request', { ...auth })).status).toBe(200);
    expect((await cloud.ops('POST', `/ops/companies/${auth.org_id}/suspend`)).status).toBe(200);
    expectRefused(await cloud.call('request', { ...auth }), 403, 'org_not_approved');
    expectRefused(await cloud.call('status', { ...auth, code: 'ABCDEFGHJKMN' }), 403, 'org_not_approved');
  });

  it('no credentials at all answer 401 auth_required', async () => {
    expectRefused(await cloud.call('request', {}), 401, 'auth_required');
    expectRefused(await cloud.call('request', { ref: 'ORD-1', ttl_hours: 24 }), 401, 'auth_required');
    expectRefused(await cloud.call('status', { code: 'ABCDEFGHJKMN' }), 401, 'auth_required');
    expectRefused(
      await cloud.call('open', { key_ref: 1, number_id: 1, actor: 'Anna' }),
      401,
      'auth_required',
    );
  });

  it('[attack:auth.secret-guess] org_id without a secret, or a secret without org_id, answers 401 auth_required', async () => {
    const auth = await secretCompany(cloud, 'Half Ltd');
    expectRefused(await cloud.call('request', { org_id: auth.org_id }), 401, 'auth_required');
    expectRefused(await cloud.call('request', { secret: auth.secret }), 401, 'auth_required');
  });

  it('authentication comes before the body is checked', async () => {
    const auth = await secretCompany(cloud, 'Order Ltd');
    expectRefused(
      await cloud.call('request', { ...auth, secret: 'glsk_wrong', ttl_hours: 'x' }),
      401,
      'bad_secret',
    );
    expectRefused(await cloud.call('open', { ...auth, secret: 'glsk_wrong' }), 401, 'bad_secret');
  });
});
