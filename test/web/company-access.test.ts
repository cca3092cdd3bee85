import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCompany } from '../../cloud/rules/companies/companies.js';
import { reconfirmDomainKeys } from '../../cloud/rules/domain-keys/confirm.js';
import { pinDomainKey } from '../../cloud/rules/domain-keys/pin.js';
import { proveText } from '../../company/prove.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { keyProofText } from '../../shared/crypto/key-proof.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * A domain company's API access (docs/design.md section 11.2): checking the key file without pinning it, the
 * proof of holding its key, the approval the console makes with the proven key, and a key rotation confirmed
 * by a proof; and the page's 404 for anyone but the company's members.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let counter = 0;

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

const text = visibleText;
const accessPath = (owner: CompanyOwner) => `/company/${owner.companyId}/access`;

async function domainOwner(): Promise<CompanyOwner & { domain: string }> {
  counter += 1;
  const domain = `parcels${counter}.example`;
  return { ...(await companyOwner(cloud, { name: `Parcels ${counter}`, domain })), domain };
}

function challengeFor(owner: CompanyOwner & { domain: string }, key: SigningKey): string {
  return keyProofText({
    serviceHost: new URL(cloud.ctx.baseUrl()).host,
    companyId: owner.companyId,
    domain: owner.domain,
    fingerprint: key.publicKey.fingerprint,
  });
}

async function check(owner: CompanyOwner): Promise<void> {
  await owner.client.get(accessPath(owner));
  const checked = await owner.client.post(`${accessPath(owner)}/key/check`);
  expect(checked.status, checked.html).toBe(303);
}

async function post(client: BrowserClient, path: string, signature: string) {
  return client.post(path, { signature });
}

/** As the console approves (section 11.5): only with the proven key, pinned as it is published now. */
async function approveWithProvenKey(companyId: number) {
  const company = await getCompany(cloud.ctx, companyId);
  const approval = { status: 'approved' as const, approved_at: clock.now() };
  return pinDomainKey(cloud.ctx, company, approval, company.key_proven ?? undefined);
}

/** A company through the whole flow: key published, checked, proven, approved. */
async function approvedDomainCompany() {
  const owner = await domainOwner();
  const key = SigningKey.generate();
  keyFiles.publish(owner.domain, key.publicKey.base64);
  await check(owner);
  expect(
    (await post(owner.client, `${accessPath(owner)}/key/proof`, proveText(key, challengeFor(owner, key))))
      .status,
  ).toBe(303);
  await approveWithProvenKey(owner.companyId);
  return { owner, key };
}

describe('a domain company before approval', () => {
  it('checks its key file, sees the fingerprint, proves the key with the tool and is approved with it', async () => {
    const owner = await domainOwner();
    const first = await owner.client.get(accessPath(owner));
    expect(first.status).toBe(200);
    expect(text(first.html)).toContain(`npm run company -- keygen --domain ${owner.domain}`);
    expect(text(first.html)).toContain(`https://${owner.domain}/.well-known/service.json`);
    expect(text(first.html)).toContain('Check your key file first.');

    const missing = await owner.client.post(`${accessPath(owner)}/key/check`);
    expect(missing.status).toBe(502);
    expect(text(missing.html)).toContain('The key file could not be used');
    expect(text(missing.html)).toContain('answered HTTP 404');

    const key = SigningKey.generate();
    keyFiles.publish(owner.domain, key.publicKey.base64);
    const checked = await owner.client.post(`${accessPath(owner)}/key/check`);
    expect(checked.location).toBe(`${accessPath(owner)}?done=checked`);
    const page = text((await owner.client.get(checked.location!)).html);
    expect(page).toContain('Key file checked');
    expect(page).toContain(`fingerprint ${key.publicKey.fingerprint}`);
    const challenge = challengeFor(owner, key);
    expect(page).toContain(challenge);
    expect(page).toContain(`npm run company -- prove --key company-key.json --text '${challenge}'`);
    // Checked, not pinned: calls are still verified against no key at all.
    expect((await getCompany(cloud.ctx, owner.companyId)).key_pub).toBeNull();

    const proven = await post(owner.client, `${accessPath(owner)}/key/proof`, proveText(key, challenge));
    expect(proven.location).toBe(`${accessPath(owner)}?done=proven`);
    expect(text((await owner.client.get(proven.location!)).html)).toContain('You proved you hold this key.');
    expect((await getCompany(cloud.ctx, owner.companyId)).key_proven).toBe(key.publicKey.base64);

    await approveWithProvenKey(owner.companyId);
    const signer = { domain: owner.domain, key };
    expect((await cloud.signedCall('request', { ref: 'ORD-1' }, signer)).status).toBe(200);
    const approved = text((await owner.client.get(accessPath(owner))).html);
    expect(approved).toContain('Your key');
    expect(approved).toContain(key.publicKey.fingerprint);
  });

  it('[attack:web.key-proof-forged] a proof by another key, for another company or of other text is refused', async () => {
    const owner = await domainOwner();
    const key = SigningKey.generate();
    keyFiles.publish(owner.domain, key.publicKey.base64);
    await owner.client.get(accessPath(owner));
    const early = await post(
      owner.client,
      `${accessPath(owner)}/key/proof`,
      proveText(key, challengeFor(owner, key)),
    );
    expect(early.status).toBe(400);
    expect(text(early.html)).toContain('Check your key file first');

    await check(owner);
    const challenge = challengeFor(owner, key);
    const otherCompany = challenge.replace(`:${owner.companyId}:`, `:${owner.companyId + 1000}:`);
    const forged = [
      proveText(SigningKey.generate(), challenge),
      proveText(key, otherCompany),
      Buffer.from(key.sign(new TextEncoder().encode(`${challenge}x`))).toString('base64'),
      'not base64 at all',
      proveText(key, challenge).slice(0, 40),
    ];
    for (const signature of forged) {
      const refused = await post(owner.client, `${accessPath(owner)}/key/proof`, signature);
      expect(refused.status, signature).toBe(400);
      expect(text(refused.html)).toContain(
        'The signature does not verify with the key published on your domain',
      );
    }
    const empty = await post(owner.client, `${accessPath(owner)}/key/proof`, '  ');
    expect(empty.status).toBe(400);
    expect(text(empty.html)).toContain('Paste the signature the prove command printed.');
    // Unproven, the console has no key to approve the company with (section 11.5).
    expect((await getCompany(cloud.ctx, owner.companyId)).key_proven).toBeNull();
  });

  it('checking again after the domain publishes another key clears the proof', async () => {
    const owner = await domainOwner();
    const key = SigningKey.generate();
    keyFiles.publish(owner.domain, key.publicKey.base64);
    await check(owner);
    await post(owner.client, `${accessPath(owner)}/key/proof`, proveText(key, challengeFor(owner, key)));
    await check(owner);
    expect((await getCompany(cloud.ctx, owner.companyId)).key_proven).toBe(key.publicKey.base64);

    const other = SigningKey.generate();
    keyFiles.publish(owner.domain, other.publicKey.base64);
    await check(owner);
    const company = await getCompany(cloud.ctx, owner.companyId);
    expect(company.key_proven).toBeNull();
    expect(company.key_published).toBe(other.publicKey.base64);
    const page = text((await owner.client.get(accessPath(owner))).html);
    expect(page).toContain(other.publicKey.fingerprint);
    expect(page).toContain(challengeFor(owner, other));
  });
});

describe('a domain company once approved', () => {
  it('[attack:web.key-proof-forged] sees the notice when its domain publishes another key, and confirms it only with a proof by that key', async () => {
    const { owner, key } = await approvedDomainCompany();
    const next = SigningKey.generate();
    keyFiles.publish(owner.domain, next.publicKey.base64);
    clock.advance(HOUR);
    await reconfirmDomainKeys(cloud.ctx);
    const signer = { domain: owner.domain, key: next };
    expect((await cloud.signedCall('request', {}, signer)).body.error).toBe('key_changed');

    const notice = text((await owner.client.get(accessPath(owner))).html);
    expect(notice).toContain(
      `Your domain now publishes another key (fingerprint ${next.publicKey.fingerprint})`,
    );
    expect(notice).toContain(`npm run company -- keygen --domain ${owner.domain} --out new-key.json`);
    expect(notice).not.toContain('Confirm the new key');
    expect(notice).toContain('Check your key file to see the key it holds now.');

    await check(owner);
    const checked = text((await owner.client.get(accessPath(owner))).html);
    expect(checked).toContain(`Your domain publishes the key with fingerprint ${next.publicKey.fingerprint}`);
    expect(checked).toContain(`prove --key new-key.json --text '${challengeFor(owner, next)}'`);
    expect(checked).toContain('Confirm the new key');

    const rotation = `${accessPath(owner)}/key/rotation`;
    const byOld = await post(owner.client, rotation, proveText(key, challengeFor(owner, next)));
    expect(byOld.status).toBe(400);
    expect((await cloud.signedCall('request', {}, signer)).body.error).toBe('key_changed');

    const confirmed = await post(owner.client, rotation, proveText(next, challengeFor(owner, next)));
    expect(confirmed.location).toBe(`${accessPath(owner)}?done=rotated`);
    const after = text((await owner.client.get(confirmed.location!)).html);
    expect(after).toContain('New key confirmed');
    expect(after).not.toContain('Your domain now publishes another key');
    expect((await cloud.signedCall('request', {}, signer)).status).toBe(200);
    expect((await cloud.signedCall('request', {}, { domain: owner.domain, key })).body.error).toBe(
      'bad_signature',
    );
  });

  it('a rotation is refused when the domain changed its key again after the proof', async () => {
    const { owner } = await approvedDomainCompany();
    const next = SigningKey.generate();
    keyFiles.publish(owner.domain, next.publicKey.base64);
    await check(owner);
    keyFiles.publish(owner.domain, SigningKey.generate().publicKey.base64);
    const refused = await post(
      owner.client,
      `${accessPath(owner)}/key/rotation`,
      proveText(next, challengeFor(owner, next)),
    );
    expect(refused.status).toBe(502);
    expect(text(refused.html)).toContain('The domain now publishes another key than the one checked');
  });

  it('putting the pinned key back and checking it lifts the notice at once', async () => {
    const { owner, key } = await approvedDomainCompany();
    keyFiles.publish(owner.domain, SigningKey.generate().publicKey.base64);
    clock.advance(HOUR);
    await reconfirmDomainKeys(cloud.ctx);
    keyFiles.publish(owner.domain, key.publicKey.base64);
    await check(owner);
    const page = text((await owner.client.get(accessPath(owner))).html);
    expect(page).not.toContain('Your domain now publishes another key');
    expect(page).toContain('there is nothing to confirm');
    expect((await cloud.signedCall('request', {}, { domain: owner.domain, key })).status).toBe(200);
  });
});

describe("who may see a company's API access", () => {
  it('[attack:web.access-other-company] a member of another company gets 404 for the page and each of its forms', async () => {
    const owner = await domainOwner();
    const secretOwner = await companyOwner(cloud, { name: 'Secret Ltd' });
    const stranger = await companyOwner(cloud, { name: 'Stranger Ltd' });
    await stranger.client.get(accessPath(stranger));
    for (const target of [owner, secretOwner]) {
      expect((await stranger.client.get(accessPath(target))).status).toBe(404);
      for (const form of ['key/check', 'key/proof', 'key/rotation', 'secret']) {
        const answer = await stranger.client.post(`${accessPath(target)}/${form}`, {
          signature: 'x',
          replaces: '0',
        });
        expect(answer.status, form).toBe(404);
      }
    }
    expect((await stranger.client.get('/company/2000000000/access')).status).toBe(404);
    const secrets = await cloud.ctx.db
      .selectFrom('company_secrets')
      .selectAll()
      .where('company_id', '=', secretOwner.companyId)
      .execute();
    expect(secrets).toEqual([]);
    expect((await getCompany(cloud.ctx, owner.companyId)).key_published_at).toBeNull();
  });

  it('a signed-out browser is sent to sign in, and its forms are refused', async () => {
    const owner = await domainOwner();
    const anonymous = new BrowserClient(cloud.app);
    const page = await anonymous.get(accessPath(owner));
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/signin?next=${encodeURIComponent(accessPath(owner))}`);
    await anonymous.get('/signin');
    const refused = await anonymous.post(`${accessPath(owner)}/key/check`);
    expect(refused.status).toBe(401);
    expect((await getCompany(cloud.ctx, owner.companyId)).key_published_at).toBeNull();
  });
});
