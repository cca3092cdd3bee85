import { domainToASCII } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { openDatabase } from '../../cloud/foundation/db/database.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
  type TestBarrier,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * `/c/<code>` as a customer meets it (docs/design.md section 10.3): the company as they must recognise it, the
 * request's state in words, the way on, a code read as a person types it, and a page that a GET never changes.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  company = await secretCompany(cloud, 'Quick Couriers');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
});

// Every suite here looks codes up from one address; a fresh minute keeps each clear of the lookup limit,
// which has its own test below.
beforeEach(() => clock.advance(CODE_LOOKUPS.windowMs));

const text = (html: string) => visibleText(html);

async function stateOf(code: string, auth: SecretAuth = company): Promise<string> {
  return (await companyStatus(cloud, auth, code)).body.state as string;
}

/** Continue, then grant the first object until withdrawn, through the pages. */
async function grantThroughPages(client: BrowserClient, code: string, barrier: TestBarrier): Promise<void> {
  await client.get(`/c/${code}`);
  expect((await client.post(`/c/${code}/claim`)).status).toBe(303);
  await client.get(`/c/${code}`);
  const granted = await client.post(`/c/${code}/grant`, {
    object: String(barrier.objects[0]!.number_id),
    lifetime: 'withdrawn',
  });
  expect(granted.status, text(granted.html)).toBe(303);
}

describe('a new request', () => {
  it('[attack:web.link-preview-claim] shows the company, "waiting for you" and the way to sign in, and a GET without a session leaves it new', async () => {
    const code = await companyRequest(cloud, company);
    const page = await new BrowserClient(cloud.app).get(`/c/${code}`);
    expect(page.status).toBe(200);
    const words = text(page.html);
    expect(words).toContain('Quick Couriers asks to open your gate');
    expect(words).toContain('Waiting for you');
    expect(words).toContain("This company's domain is not confirmed");
    expect(page.html).toContain(`href="/signin?next=/c/${code}"`);
    expect(page.html).toContain(`href="/signup?next=/c/${code}"`);
    expect(page.html).not.toContain('<img class="logo');
    expect(await stateOf(code)).toBe('new');
  });

  it('[attack:web.link-preview-claim] a GET with a session, as a messenger on a signed-in phone would send, leaves it new and offers Continue', async () => {
    const code = await companyRequest(cloud, company);
    const { client } = await signedInCustomer(cloud, 'Preview Pia');
    const previews: Record<string, string>[] = [
      {},
      { 'user-agent': 'WhatsApp/2.23 A' },
      { 'user-agent': 'TelegramBot (like TwitterBot)' },
    ];
    for (const headers of previews) {
      const page = await client.get(`/c/${code}`, headers);
      expect(page.status).toBe(200);
      expect(text(page.html)).toContain('Waiting for you');
      expect(page.html).toContain(`action="/c/${code}/claim"`);
    }
    const head = await cloud.app.inject({ method: 'HEAD', url: `/c/${code}` });
    expect(head.statusCode).toBe(200);
    expect(await stateOf(code)).toBe('new');
  });

  it('becomes claimed only by the Continue button, and then shows the consent form', async () => {
    const code = await companyRequest(cloud, company);
    const { client, id } = await signedInCustomer(cloud, 'Claiming Carl');
    await insertBarrier(cloud, id);
    await client.get(`/c/${code}`);
    const claimed = await client.post(`/c/${code}/claim`);
    expect(claimed.status).toBe(303);
    expect(claimed.location).toBe(`/c/${code}`);
    expect(await stateOf(code)).toBe('claimed');
    const page = await client.get(`/c/${code}`);
    expect(text(page.html)).toContain('Waiting for your answer');
    expect(text(page.html)).toContain('Give Quick Couriers access');
  });

  it('refuses Continue from a browser whose session ended, and leaves the request new', async () => {
    const code = await companyRequest(cloud, company);
    const { client } = await signedInCustomer(cloud, 'Leaving Lou');
    await client.get(`/c/${code}`);
    await client.post('/signout');
    const refused = await client.post(`/c/${code}/claim`);
    expect(refused.status).toBe(401);
    expect(text(refused.html)).toContain('Sign in to continue.');
    expect(await stateOf(code)).toBe('new');
  });
});

describe('the other states, in words', () => {
  it('a request another account took says it is taken, and nothing of who or which barrier', async () => {
    const code = await companyRequest(cloud, company);
    const first = await signedInCustomer(cloud, 'First Frida');
    await insertBarrier(cloud, first.id, { name: 'Frida secret yard' });
    await first.client.get(`/c/${code}`);
    await first.client.post(`/c/${code}/claim`);

    const second = await signedInCustomer(cloud, 'Second Sven');
    await second.client.get(`/c/${code}`);
    const taken = await second.client.get(`/c/${code}`);
    expect(text(taken.html)).toContain('Taken by another account');
    expect(text(taken.html)).toContain('Another account has already taken this request');
    expect(taken.html).not.toContain('Frida');
    expect(taken.html).not.toContain(`/c/${code}/grant`);
    // Pressing Continue on a stale page changes nothing either.
    await second.client.post(`/c/${code}/claim`);
    expect(await stateOf(code)).toBe('claimed');

    const signedOut = await new BrowserClient(cloud.app).get(`/c/${code}`);
    expect(text(signedOut.html)).toContain('Someone has already opened this request');
    expect(signedOut.html).toContain(`href="/signin?next=/c/${code}"`);
  });

  it('an issued request says it is already granted, with the details only to the customer who granted it', async () => {
    const code = await companyRequest(cloud, company);
    const owner = await signedInCustomer(cloud, 'Owner Olga');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Olga yard' });
    await grantThroughPages(owner.client, code, barrier);
    const mine = text((await owner.client.get(`/c/${code}`)).html);
    expect(mine).toContain('Already granted');
    expect(mine).toContain('Olga yard');
    expect(mine).toContain('Until you withdraw it');
    expect(mine).not.toContain('Grant access');

    const stranger = text((await new BrowserClient(cloud.app).get(`/c/${code}`)).html);
    expect(stranger).toContain('Already granted');
    expect(stranger).not.toContain('Olga');
  });

  it('a withdrawn request says so and offers nothing to grant', async () => {
    const code = await companyRequest(cloud, company);
    const owner = await signedInCustomer(cloud, 'Withdrawing Wim');
    const barrier = await insertBarrier(cloud, owner.id);
    await grantThroughPages(owner.client, code, barrier);
    const keyRef = (await companyStatus(cloud, company, code)).body.key_ref as number;
    await owner.client.get(`/barriers/${barrier.deviceId}`);
    await owner.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    const page = text((await owner.client.get(`/c/${code}`)).html);
    expect(page).toContain('Withdrawn');
    expect(page).toContain('You withdrew this access');
    expect(page).not.toContain('Grant access');
  });

  it('an expired request says so, from new and from claimed alike', async () => {
    const fresh = await companyRequest(cloud, company, 1);
    const claimedCode = await companyRequest(cloud, company, 1);
    const { client, id } = await signedInCustomer(cloud, 'Late Lena');
    await insertBarrier(cloud, id);
    await client.get(`/c/${claimedCode}`);
    await client.post(`/c/${claimedCode}/claim`);
    clock.advance(HOUR);
    for (const code of [fresh, claimedCode]) {
      const page = await client.get(`/c/${code}`);
      expect(page.status).toBe(200);
      expect(text(page.html)).toContain('Expired');
      expect(text(page.html)).toContain('ask them for a new code');
      expect(page.html).not.toContain('/grant"');
      expect(page.html).not.toContain('/claim"');
      expect(await stateOf(code)).toBe('expired');
    }
  });
});

describe('codes as people type them', () => {
  it('finds a request from its code in lower case, with hyphens and spaces, and O, I or L for 0 and 1', async () => {
    const code = await companyRequest(cloud, company);
    const typed = code
      .toLowerCase()
      .replace(/0/g, 'o')
      .replace(/1/g, 'l')
      .replace(/(.{4})(?=.)/g, '$1-');
    const page = await new BrowserClient(cloud.app).get(`/c/${encodeURIComponent(` ${typed} `)}`);
    expect(page.status).toBe(200);
    expect(text(page.html)).toContain('Quick Couriers asks to open your gate');
    // The links carry the code as the company issued it.
    expect(page.html).toContain(`href="/signin?next=/c/${code}"`);
  });

  it('tells a well-formed unknown code apart from text that cannot be a code, both 404', async () => {
    const client = new BrowserClient(cloud.app);
    const unknown = await client.get('/c/ZZZZ-ZZZZ-ZZZZ');
    expect(unknown.status).toBe(404);
    expect(text(unknown.html)).toContain('No request has this code');
    expect(text(unknown.html)).toContain('ZZZZZZZZZZZZ');
    const mistyped = await client.get('/c/not-a-code');
    expect(mistyped.status).toBe(404);
    expect(text(mistyped.html)).toContain('This is not a request code');
  });

  it('looks up a code typed into the form on that page', async () => {
    const code = await companyRequest(cloud, company);
    const answer = await new BrowserClient(cloud.app).get(
      `/c?code=${encodeURIComponent(code.toLowerCase())}`,
    );
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}`);
  });
});

describe('the company as the customer must recognise it', () => {
  it('shows a verified domain, and the punycode beside a spelling that mixes scripts', async () => {
    const plain = await signatureCompany(cloud, keyFiles, 'gardeners.example');
    const mixedUnicode = 'p\u0430ypal.example';
    const mixedAscii = domainToASCII(mixedUnicode);
    const mixed = await signatureCompany(cloud, keyFiles, mixedAscii);
    const client = new BrowserClient(cloud.app);
    for (const [signed, expected] of [
      [plain, 'Verified domain: gardeners.example'],
      [mixed, `Verified domain: ${mixedUnicode} (${mixedAscii})`],
    ] as const) {
      const answer = await cloud.signedCall('request', {}, signed.signer);
      expect(answer.status).toBe(200);
      const page = text((await client.get(`/c/${answer.body.code as string}`)).html);
      expect(page).toContain(expected);
      expect(page).not.toContain('not confirmed');
    }
  });

  it('shows a company without a domain by its own name with the note, and its text as text', async () => {
    const marked = await secretCompany(cloud, '<b>Bold</b> & Sons');
    const code = await companyRequest(cloud, marked);
    const page = await new BrowserClient(cloud.app).get(`/c/${code}`);
    expect(page.html).not.toContain('<b>Bold</b>');
    expect(text(page.html)).toContain('<b>Bold</b> & Sons asks to open your gate');
    expect(text(page.html)).toContain("This company's domain is not confirmed");
  });
});

describe('[attack:web.code-lookup-hammer] guessing codes', () => {
  function guess(i: number): string {
    return `GUESS${String(i).padStart(7, '0')}`.replace(/[ILOU]/g, 'X');
  }

  it('is refused past the limit per address with 429 and Retry-After, and allowed again in the next window', async () => {
    const client = new BrowserClient(cloud.app);
    for (let i = 0; i < CODE_LOOKUPS.max; i++) expect((await client.get(`/c/${guess(i)}`)).status).toBe(404);
    const refused = await client.get(`/c/${guess(99)}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(text(refused.html)).toContain('Too many attempts');
    // A real code is refused too while the limit holds: guessing gains nothing by mixing in a known one.
    const real = await companyRequest(cloud, company);
    expect((await client.get(`/c/${real}`)).status).toBe(429);
    clock.advance(CODE_LOOKUPS.windowMs);
    expect((await client.get(`/c/${real}`)).status).toBe(200);
  });

  it('is not escaped by claiming another address in X-Forwarded-For when no proxy is trusted', async () => {
    clock.advance(CODE_LOOKUPS.windowMs);
    const client = new BrowserClient(cloud.app);
    for (let i = 0; i < CODE_LOOKUPS.max; i++) {
      const forged = { 'x-forwarded-for': `203.0.113.${i % 250}` };
      expect((await client.get(`/c/${guess(i)}`, forged)).status).toBe(404);
    }
    expect((await client.get(`/c/${guess(98)}`, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'holds across two cloud instances on one PostgreSQL database',
    async () => {
      const handle = await openDatabase({ url: database.url! });
      const second = await startTestCloud({ database: handle, clock });
      try {
        const clients = [new BrowserClient(cloud.app), new BrowserClient(second.app)];
        for (let i = 0; i < CODE_LOOKUPS.max; i++) {
          expect((await clients[i % 2]!.get(`/c/${guess(i)}`)).status).toBe(404);
        }
        for (const client of clients) {
          const refused = await client.get(`/c/${guess(100)}`);
          expect(refused.status).toBe(429);
          expect(refused.headers['retry-after']).toBeDefined();
        }
      } finally {
        await second.stop();
        await handle.close();
      }
    },
  );
});
