import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeNonces } from '../../cloud/rules/call-auth/nonces.js';
import { reconfirmDomainKeys } from '../../cloud/rules/domain-keys/confirm.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signRequest } from '../../shared/crypto/request-signing.js';
import { FakeClock } from '../support/clock.js';
import {
  type Answer,
  type Signer,
  signatureCompany,
  startTestCloud,
  type TestCloud,
} from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * Signed calls bound to the company's domain (docs/design.md section 2; cloud/README.md, "Signature bound to your domain"): the happy
 * path and each attack of section 2, each in its own test. Every test makes its own company, so the clock
 * moving on in one test never leaves another with a stale key.
 */

interface RefusedKey {
  name: string;
  key: string;
}

const vectors = JSON.parse(
  readFileSync(new URL('../vectors/request-signing.json', import.meta.url), 'utf8'),
) as {
  keys_to_refuse: RefusedKey[];
};

const HOUR = 3600 * 1000;
/** Whole seconds, so that "exactly 300 s" means what it says. */
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

function nextDomain(label = 'co'): string {
  domainCounter += 1;
  return `${label}${domainCounter}.example`;
}

async function newCompany(label?: string): Promise<{ id: number; signer: Signer }> {
  return signatureCompany(cloud, keyFiles, nextDomain(label));
}

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
const freshNonce = () => randomBytes(16).toString('hex');

function expectRefused(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error: code });
  expect(answer.body.message).toBeTypeOf('string');
}

async function expectWorks(signer: Signer): Promise<void> {
  const answer = await cloud.signedCall('request', { ref: 'works' }, signer);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** Sends raw bytes over a real socket and reads the status code and the JSON body of the answer. */
async function rawRequest(request: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
  const port = (cloud.app.server.address() as { port: number }).port;
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
  return { status, body: JSON.parse(bodyText) as Record<string, unknown> };
}

/** The same signature with S replaced by S + L: equal modulo L, but not canonical (RFC 8032 5.1.7). */
function withNonCanonicalS(signatureBase64: string): string {
  const signature = Buffer.from(signatureBase64, 'base64');
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
  let t = s + L;
  for (let i = 32; i < 64; i++) {
    signature[i] = Number(t & 0xffn);
    t >>= 8n;
  }
  return signature.toString('base64');
}

describe('the happy path', () => {
  it('a signed request and a signed status of it', async () => {
    const { signer } = await newCompany();
    const created = await cloud.signedCall('request', { ref: 'ORD-1', ttl_hours: 2 }, signer);
    expect(created.status).toBe(200);
    expect(created.body.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{12}$/);
    const status = await cloud.signedCall('status', { code: created.body.code }, signer);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ code: created.body.code, state: 'new', ref: 'ORD-1' });
  });

  it('org_id in the body naming the same company is accepted', async () => {
    const { id, signer } = await newCompany();
    expect((await cloud.signedCall('request', { org_id: id }, signer)).status).toBe(200);
  });

  it('X-Service-Org is compared case-insensitively', async () => {
    const { signer } = await newCompany();
    expect(
      (await cloud.signedCall('request', {}, { ...signer, domain: signer.domain.toUpperCase() })).status,
    ).toBe(200);
  });

  it('timestamps exactly 300 s off either way are still accepted', async () => {
    const { signer } = await newCompany();
    expect((await cloud.signedCall('request', {}, { ...signer, ts: nowSeconds() - 300 })).status).toBe(200);
    expect((await cloud.signedCall('request', {}, { ...signer, ts: nowSeconds() + 300 })).status).toBe(200);
  });

  it('a signature without base64 padding is accepted', async () => {
    const { signer } = await newCompany();
    const body = '{"ref":"no padding"}';
    const headers = signRequest(signer.key, { domain: signer.domain, body, ts: nowSeconds() });
    headers['X-Service-Sig'] = headers['X-Service-Sig'].replace(/=+$/, '');
    expect((await cloud.call('request', body, { ...headers })).status).toBe(200);
  });
});

describe('attacks of docs/design.md section 2', () => {
  it('[attack:auth.nonce-replay] a replayed nonce answers 401 nonce_reused', async () => {
    const { signer } = await newCompany();
    const nonce = freshNonce();
    expect((await cloud.signedCall('request', { ref: 'once' }, { ...signer, nonce })).status).toBe(200);
    expectRefused(
      await cloud.signedCall('request', { ref: 'once' }, { ...signer, nonce }),
      401,
      'nonce_reused',
    );
    expectRefused(
      await cloud.signedCall('status', { code: 'X' }, { ...signer, nonce: nonce.toUpperCase() }),
      401,
      'nonce_reused',
    );
  });

  it('[attack:auth.tampered-body] a tampered body answers 401 bad_signature', async () => {
    const { signer } = await newCompany();
    const headers = signRequest(signer.key, {
      domain: signer.domain,
      body: '{"ref":"ORD-1"}',
      ts: nowSeconds(),
    });
    expectRefused(await cloud.call('request', '{"ref":"ORD-2"}', { ...headers }), 401, 'bad_signature');
  });

  it('a refused signature does not burn the nonce', async () => {
    const { signer } = await newCompany();
    const nonce = freshNonce();
    const headers = signRequest(signer.key, {
      domain: signer.domain,
      body: '{"ref":"A"}',
      ts: nowSeconds(),
      nonce,
    });
    expectRefused(await cloud.call('request', '{"ref":"B"}', { ...headers }), 401, 'bad_signature');
    expect((await cloud.call('request', '{"ref":"A"}', { ...headers })).status).toBe(200);
  });

  it('[attack:auth.stale-timestamp] a timestamp 301 s in the past answers 401 stale_timestamp', async () => {
    const { signer } = await newCompany();
    expectRefused(
      await cloud.signedCall('request', {}, { ...signer, ts: nowSeconds() - 301 }),
      401,
      'stale_timestamp',
    );
  });

  it('[attack:auth.stale-timestamp] a timestamp 301 s in the future answers 401 stale_timestamp', async () => {
    const { signer } = await newCompany();
    expectRefused(
      await cloud.signedCall('request', {}, { ...signer, ts: nowSeconds() + 301 }),
      401,
      'stale_timestamp',
    );
  });

  it('[attack:auth.wrong-key] a signature by another key answers 401 bad_signature', async () => {
    const { signer } = await newCompany();
    expectRefused(
      await cloud.signedCall('request', {}, { ...signer, key: SigningKey.generate() }),
      401,
      'bad_signature',
    );
  });

  it('[attack:auth.wrong-key] a signature over another domain answers 401 bad_signature', async () => {
    const { signer } = await newCompany();
    const body = '{}';
    const headers = signRequest(signer.key, { domain: 'other.example', body, ts: nowSeconds() });
    expectRefused(
      await cloud.call('request', body, { ...headers, 'X-Service-Org': signer.domain }),
      401,
      'bad_signature',
    );
  });

  it('[attack:auth.malleable-signature] a non-canonical signature (S + L) answers 401 bad_signature', async () => {
    const { signer } = await newCompany();
    const body = '{"ref":"malleable"}';
    const headers = signRequest(signer.key, { domain: signer.domain, body, ts: nowSeconds() });
    const malleated = withNonCanonicalS(headers['X-Service-Sig']);
    expect(malleated).not.toBe(headers['X-Service-Sig']);
    expectRefused(
      await cloud.call('request', body, { ...headers, 'X-Service-Sig': malleated }),
      401,
      'bad_signature',
    );
    // The canonical signature itself is fine.
    expect((await cloud.call('request', body, { ...headers })).status).toBe(200);
  });

  it.each([
    ['raw UTF-8 bytes', Buffer.from('gärtner.example', 'utf8')],
    ['latin-1 bytes', Buffer.from('gärtner.example', 'latin1')],
  ])('X-Service-Org with national characters as %s answers 401 bad_headers', async (_label, orgBytes) => {
    const body = Buffer.from('{}');
    const key = SigningKey.generate();
    const ascii = signRequest(key, { domain: 'xn--grtner-bua.example', body: '{}', ts: nowSeconds() });
    const head = [
      'POST /api/company.php?a=request HTTP/1.1',
      'Host: localhost',
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      'Connection: close',
      `X-Service-Ts: ${ascii['X-Service-Ts']}`,
      `X-Service-Nonce: ${ascii['X-Service-Nonce']}`,
      `X-Service-Sig: ${ascii['X-Service-Sig']}`,
    ].join('\r\n');
    const request = Buffer.concat([
      Buffer.from(`${head}\r\nX-Service-Org: `),
      orgBytes,
      Buffer.from('\r\n\r\n'),
      body,
    ]);
    const answer = await rawRequest(request);
    expect({ status: answer.status, error: answer.body.error }).toEqual({
      status: 401,
      error: 'bad_headers',
    });
  });

  it.each(['X-Service-Org', 'X-Service-Ts', 'X-Service-Nonce', 'X-Service-Sig'] as const)(
    'all headers but %s answer 401 bad_headers',
    async (missing) => {
      const { signer } = await newCompany();
      const headers: Record<string, string> = {
        ...signRequest(signer.key, { domain: signer.domain, body: '{}', ts: nowSeconds() }),
      };
      delete headers[missing];
      expectRefused(await cloud.call('request', '{}', headers), 401, 'bad_headers');
    },
  );

  it.each([
    ['a nonce of 31 hex characters', { 'X-Service-Nonce': 'a'.repeat(31) }],
    ['a nonce that is not hex', { 'X-Service-Nonce': 'z'.repeat(32) }],
    ['a timestamp that is not Unix seconds', { 'X-Service-Ts': '2026-01-01T00:00:00Z' }],
    ['a signature that is not base64', { 'X-Service-Sig': '%'.repeat(88) }],
    ['a signature of 63 bytes', { 'X-Service-Sig': Buffer.alloc(63).toString('base64') }],
    ['a domain with a space', { 'X-Service-Org': 'acme example' }],
  ])('%s answers 401 bad_headers', async (_label, override) => {
    const { signer } = await newCompany();
    const headers = signRequest(signer.key, { domain: signer.domain, body: '{}', ts: nowSeconds() });
    expectRefused(await cloud.call('request', '{}', { ...headers, ...override }), 401, 'bad_headers');
  });

  it('an unknown domain answers 401 unknown_org', async () => {
    expectRefused(
      await cloud.signedCall('request', {}, { domain: nextDomain('nobody'), key: SigningKey.generate() }),
      401,
      'unknown_org',
    );
  });

  it('[attack:auth.org-mismatch] org_id in the body naming another company answers 401 unknown_org', async () => {
    const first = await newCompany();
    const second = await newCompany();
    expectRefused(await cloud.signedCall('request', { org_id: second.id }, first.signer), 401, 'unknown_org');
    expectRefused(
      await cloud.signedCall('request', { org_id: String(first.id) }, first.signer),
      401,
      'unknown_org',
    );
  });

  it('a pending company answers 403 org_not_approved', async () => {
    const domain = nextDomain('pending');
    const key = SigningKey.generate();
    keyFiles.publish(domain, key.publicKey.base64);
    const created = await cloud.ops('POST', '/ops/companies', { name: 'Pending Ltd', domain });
    expect(created.status).toBe(200);
    expectRefused(await cloud.signedCall('request', {}, { domain, key }), 403, 'org_not_approved');
  });

  it('a suspended company answers 403 org_not_approved', async () => {
    const { id, signer } = await newCompany();
    await expectWorks(signer);
    expect((await cloud.ops('POST', `/ops/companies/${id}/suspend`)).status).toBe(200);
    expectRefused(await cloud.signedCall('request', {}, signer), 403, 'org_not_approved');
  });

  it('[attack:auth.unapproved-company] a suspended company is still refused with a wrong signature first', async () => {
    const { id, signer } = await newCompany();
    await cloud.ops('POST', `/ops/companies/${id}/suspend`);
    expectRefused(
      await cloud.signedCall('request', {}, { ...signer, key: SigningKey.generate() }),
      401,
      'bad_signature',
    );
  });
});

describe('a national domain in punycode', () => {
  it('xn--grtner-bua.example signs calls, and the Unicode spelling is kept for display', async () => {
    const punycode = 'xn--grtner-bua.example';
    const key = SigningKey.generate();
    keyFiles.publish(punycode, key.publicKey.base64);
    // The operator types the readable spelling; it is stored in punycode.
    const created = await cloud.ops('POST', '/ops/companies', {
      name: 'Gärtner GmbH',
      domain: 'gärtner.example',
    });
    expect(created.status).toBe(200);
    const company = created.body.company as { id: number; domain: string; domain_display: string };
    expect(company.domain).toBe(punycode);
    expect(company.domain_display).toBe('gärtner.example');
    expect((await cloud.ops('POST', `/ops/companies/${company.id}/approve`)).status).toBe(200);

    const answer = await cloud.signedCall('request', { ref: 'Gärtner' }, { domain: punycode, key });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const listed = await cloud.ops('GET', `/ops/companies/${company.id}`);
    expect(listed.body.company).toMatchObject({ domain: punycode, domain_display: 'gärtner.example' });
  });
});

describe('the key file', () => {
  describe.each(vectors.keys_to_refuse)('[attack:auth.weak-key] a key file holding "$name"', ({ key }) => {
    it('is refused at approval: ops approve answers 502 key_fetch_failed', async () => {
      const domain = nextDomain('badkey');
      keyFiles.publish(domain, key);
      const created = await cloud.ops('POST', '/ops/companies', { name: 'Bad Key Ltd', domain });
      const id = (created.body.company as { id: number }).id;
      const approved = await cloud.ops('POST', `/ops/companies/${id}/approve`);
      expectRefused(approved, 502, 'key_fetch_failed');
      expect(approved.body.detail).toBe('invalid_key');
      const after = await cloud.ops('GET', `/ops/companies/${id}`);
      expect(after.body.company).toMatchObject({ status: 'pending', key: null });
    });

    it('is refused at re-confirmation: calls answer 401 key_changed', async () => {
      const { signer } = await newCompany('rebad');
      await expectWorks(signer);
      keyFiles.publish(signer.domain, key);
      clock.advance(HOUR);
      await reconfirmDomainKeys(cloud.ctx, 10_000);
      expectRefused(await cloud.signedCall('request', {}, signer), 401, 'key_changed');
    });
  });

  it('[attack:auth.domain-changes-hands] a different valid key published later answers key_changed until the rotation is confirmed', async () => {
    const { id, signer } = await newCompany('rotate');
    const next = SigningKey.generate();
    keyFiles.publish(signer.domain, next.publicKey.base64);
    clock.advance(HOUR);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    // Neither the pinned key nor the new one works: a domain that changed hands inherits nothing.
    expectRefused(await cloud.signedCall('request', {}, signer), 401, 'key_changed');
    expectRefused(await cloud.signedCall('request', {}, { ...signer, key: next }), 401, 'key_changed');
    const described = await cloud.ops('GET', `/ops/companies/${id}`);
    expect(described.body.company).toMatchObject({ key_changed: true, key: signer.key.publicKey.base64 });

    const confirmed = await cloud.ops('POST', `/ops/companies/${id}/confirm-key`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.company).toMatchObject({ key: next.publicKey.base64, key_changed: false });
    expect(confirmed.body.fingerprint).toBe(next.publicKey.fingerprint);
    expect((await cloud.signedCall('request', {}, { ...signer, key: next })).status).toBe(200);
    expectRefused(await cloud.signedCall('request', {}, signer), 401, 'bad_signature');
  });

  it('the same key re-confirmed keeps calls working past 24 hours', async () => {
    const { signer } = await newCompany('steady');
    clock.advance(20 * HOUR);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    clock.advance(20 * HOUR);
    // 40 hours after approval, 20 after the last confirmation.
    await expectWorks(signer);
  });

  it('[attack:auth.withdrawn-key-file] a withdrawn key file: calls work within 24 h, then answer key_unavailable', async () => {
    const { signer } = await newCompany('withdrawn');
    keyFiles.withdraw(signer.domain);
    clock.advance(HOUR);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    await expectWorks(signer);
    clock.advance(22 * HOUR);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    await expectWorks(signer);
    clock.advance(HOUR + 1000);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    expectRefused(await cloud.signedCall('request', {}, signer), 401, 'key_unavailable');

    // Published again and re-confirmed, the same key works again.
    keyFiles.publish(signer.domain, signer.key.publicKey.base64);
    clock.advance(HOUR);
    await reconfirmDomainKeys(cloud.ctx, 10_000);
    await expectWorks(signer);
  });
});

describe('nonces', () => {
  it('[attack:auth.nonce-replay] a nonce used on one cloud instance is refused on a second instance sharing the database', async () => {
    const { signer } = await newCompany('twin');
    const second = await startTestCloud({
      database,
      clock,
      env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template },
    });
    try {
      const nonce = freshNonce();
      expect((await cloud.signedCall('request', { ref: 'a' }, { ...signer, nonce })).status).toBe(200);
      expectRefused(
        await second.signedCall('request', { ref: 'a' }, { ...signer, nonce }),
        401,
        'nonce_reused',
      );
      // The second instance serves the company otherwise.
      expect((await second.signedCall('request', { ref: 'b' }, signer)).status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it('[attack:auth.nonce-replay] nonces are kept 600 s, then purged; a replay of a purged nonce is refused as stale', async () => {
    const { id, signer } = await newCompany('purge');
    const nonce = freshNonce();
    const ts = nowSeconds();
    expect((await cloud.signedCall('request', { ref: 'p' }, { ...signer, nonce, ts })).status).toBe(200);
    const stored = () =>
      cloud.ctx.db
        .selectFrom('nonces')
        .select('nonce')
        .where('company_id', '=', id)
        .where('nonce', '=', nonce)
        .execute();

    clock.advance(600 * 1000);
    await purgeNonces(cloud.ctx);
    expect(await stored()).toHaveLength(1);

    clock.advance(1000);
    expect(await purgeNonces(cloud.ctx)).toBeGreaterThanOrEqual(1);
    expect(await stored()).toHaveLength(0);
    expectRefused(
      await cloud.signedCall('request', { ref: 'p' }, { ...signer, nonce, ts }),
      401,
      'stale_timestamp',
    );
    expect(await stored()).toHaveLength(0);
  });
});
