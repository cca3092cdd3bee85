import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCompany } from '../../cloud/rules/companies/companies.js';
import { changeCompany } from '../../cloud/rules/company-changes/company-changes.js';
import { reconfirmDomainKeys } from '../../cloud/rules/domain-keys/confirm.js';
import {
  checkPublishedKey,
  confirmProvenRotation,
  keyProofChallenge,
  proveHeldKey,
} from '../../cloud/rules/domain-keys/published-key.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { FakeClock } from '../support/clock.js';
import {
  type Signer,
  secretCompany,
  signatureCompany,
  startTestCloud,
  type TestCloud,
} from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * The company cache (cloud/rules/call-auth/company-cache.ts) is told of every change to a company by
 * changeCompany (cloud/rules/company-changes/company-changes.ts), the one way a company is changed. Each test lets a
 * company's call be remembered first, then changes the company along one path, and the very next call, within
 * the cache's lifetime on the same instance, sees the change.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let domainCounter = 0;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
});

async function remembered(): Promise<{ id: number; signer: Signer }> {
  domainCounter += 1;
  const company = await signatureCompany(cloud, keyFiles, `changes${domainCounter}.example`);
  expect(await signedStatus(company.signer)).toBe(200);
  return company;
}

/** A signed `request`: its status, or its error code. */
async function signedStatus(signer: Signer): Promise<number | string> {
  const answer = await cloud.signedCall('request', {}, signer);
  return answer.status === 200 ? 200 : (answer.body.error as string);
}

describe('the next call sees a change made', () => {
  it('by an operator suspending and resuming the company, in signature and in secret mode', async () => {
    const { id, signer } = await remembered();
    const secret = await secretCompany(cloud, 'Secret Changes Ltd');
    expect((await cloud.call('request', secret)).status).toBe(200);

    expect((await cloud.ops('POST', `/ops/companies/${id}/suspend`, { reason: 'checks' })).status).toBe(200);
    expect(await signedStatus(signer)).toBe('org_not_approved');
    await cloud.ops('POST', `/ops/companies/${secret.org_id}/suspend`, { reason: 'checks' });
    expect((await cloud.call('request', secret)).body.error).toBe('org_not_approved');

    expect((await cloud.ops('POST', `/ops/companies/${id}/resume`)).status).toBe(200);
    expect(await signedStatus(signer)).toBe(200);
  });

  it('by the re-confirmation job finding another key, and an operator pinning it', async () => {
    const { id, signer } = await remembered();
    const next: Signer = { domain: signer.domain, key: SigningKey.generate() };
    keyFiles.publish(signer.domain, next.key.publicKey.base64);
    // Due for re-confirmation now, rather than moving the clock past the cache's lifetime.
    await cloud.ctx.db.updateTable('companies').set({ key_checked_at: null }).where('id', '=', id).execute();
    await reconfirmDomainKeys(cloud.ctx);
    expect(await signedStatus(signer)).toBe('key_changed');

    expect((await cloud.ops('POST', `/ops/companies/${id}/confirm-key`)).status).toBe(200);
    expect(await signedStatus(next)).toBe(200);
    expect(await signedStatus(signer)).toBe('bad_signature');
  });

  it('by the company confirming a rotation it proved from its area', async () => {
    const { id, signer } = await remembered();
    const next: Signer = { domain: signer.domain, key: SigningKey.generate() };
    const key = next.key.publicKey.base64;
    keyFiles.publish(signer.domain, key);
    expect(await checkPublishedKey(cloud.ctx, await getCompany(cloud.ctx, id))).toMatchObject({ ok: true });
    const checked = await getCompany(cloud.ctx, id);
    const proof = next.key.sign(new TextEncoder().encode(keyProofChallenge(cloud.ctx, checked, key)));
    await proveHeldKey(cloud.ctx, checked, Buffer.from(proof).toString('base64'));
    expect(await signedStatus(signer)).toBe(200);

    await confirmProvenRotation(
      cloud.ctx,
      await getCompany(cloud.ctx, id),
      Buffer.from(proof).toString('base64'),
    );
    expect(await signedStatus(next)).toBe(200);
    expect(await signedStatus(signer)).toBe('bad_signature');
  });
});

describe('changeCompany', () => {
  it('refuses to join a transaction it did not open, after whose commit nothing would forget the company', async () => {
    const { id } = await remembered();
    const joined = cloud.ctx.db
      .transaction()
      .execute((trx) => changeCompany({ ...cloud.ctx, db: trx }, id, async () => 'changed'));
    await expect(joined).rejects.toThrow(/its own transaction/);
  });
});

/** Every file of the cloud that writes a company's row or its secrets, relative to cloud/. */
function companyWriters(): string[] {
  const root = join(import.meta.dirname, '..', '..', 'cloud');
  const writes = /(updateTable|insertInto|deleteFrom)\('(companies|company_secrets)'\)|update companies\b/;
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|tsx|sql)$/.test(file) && !file.includes('migrations'))
    .filter((file) => writes.test(readFileSync(join(root, file), 'utf8')))
    .map((file) => relative(root, join(root, file)))
    .sort();
}

describe('one way to change a company', () => {
  it('every file that changes a company does so through changeCompany, but for what no call reads', () => {
    const root = join(import.meta.dirname, '..', '..', 'cloud');
    const without = companyWriters().filter(
      (file) => !readFileSync(join(root, file), 'utf8').includes('changeCompany('),
    );
    // A new company (a registration, a company's sandbox) is in no cache.
    expect(without).toEqual(['rules/companies/members.ts', 'rules/sandbox/sandbox-world.ts']);
  });
});
