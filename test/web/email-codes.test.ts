import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCloudConfig } from '../../cloud/foundation/config.js';
import { configuredMailer, logMailer } from '../../cloud/links/mail/mailer.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { purgeEmailCodes } from '../../cloud/rules/sign-in-codes/codes.js';
import { BrowserClient, type PageAnswer, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startMailServer, type TestMailServer } from '../support/mail-server.js';
import { freePort } from '../support/ports.js';
import { type LogEntry, recordingLogger } from '../support/recording-logger.js';

/**
 * Signing up and in with a one-time code sent by e-mail (docs/design.md section 10.2), through a real SMTP
 * server: the code is read from the message as the person would read it.
 */
const HOUR = 3600 * 1000;
let database: TestDatabase;
let mail: TestMailServer;
let clock: FakeClock;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  clock = new FakeClock(new Date('2026-11-23T01:00:00Z'));
  cloud = await startTestCloud({
    database,
    clock,
    env: { SMTP_URL: mail.url, MAIL_FROM: 'Gatelink <gate@example.com>' },
  });
});

afterAll(async () => {
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

/** The code in the newest e-mail to `address`, as a person reads it. */
function codeFor(address: string): string {
  const message = mail.lastTo(address);
  expect(message, `no e-mail to ${address}`).toBeDefined();
  const code = /Your Gatelink code is (\d{6})/.exec(message!.raw)?.[1];
  expect(code, 'no code in the e-mail').toBeDefined();
  return code!;
}

/** The hidden fields a page's form (by its action) carries, as the browser would post them. */
function carried(page: PageAnswer, action = '/signin/code'): Record<string, string> {
  const fields: Record<string, string> = {};
  const form =
    new RegExp(`<form method="post" action="${action}"[\\s\\S]*?</form>`).exec(page.html)?.[0] ?? '';
  for (const match of form.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)"/g)) {
    if (match[1] !== '_csrf') fields[match[1]!] = match[2]!.replace(/&amp;/g, '&');
  }
  return fields;
}

/** Every address an answer sends the browser to: its Location, and the links and form actions on the page. */
function urlsIn(answer: PageAnswer): string[] {
  const urls = answer.location ? [answer.location] : [];
  for (const match of answer.html.matchAll(/\s(?:href|action|src)="([^"]*)"/g)) {
    urls.push(match[1]!.replace(/&amp;/g, '&'));
  }
  return urls;
}

/** None of `urls`, read as a browser or a log reader would, holds any of `personal`. */
function expectNothingPersonal(urls: string[], personal: string[]): void {
  expect(urls.length).toBeGreaterThan(0);
  for (const url of urls) {
    const read = decodeURIComponent(url.replace(/\+/g, ' ')).toLowerCase();
    for (const word of personal) expect(read, url).not.toContain(word.toLowerCase());
  }
}

/** Asks for a sign-in code for `email` and returns the code page. */
async function askForCode(client: BrowserClient, email: string, next?: string): Promise<PageAnswer> {
  await client.get(next ? `/signin?next=${encodeURIComponent(next)}` : '/signin');
  const asked = await client.post('/signin/email', { email, ...(next ? { next } : {}) });
  expect(asked.status, visibleText(asked.html)).toBe(303);
  return client.get(asked.location!);
}

/** Starts the next window of every hourly limit, so that one test's attempts do not count against the next. */
function nextHour(): void {
  clock.advance(HOUR);
}

describe('signing up with an e-mail code', () => {
  it('sends a code to the address, and makes the account only once the code is entered', async () => {
    const client = new BrowserClient(cloud.app);
    expect(visibleText((await client.get('/signup')).html)).toContain('Create your account');
    const asked = await client.post('/signup/email', { display_name: ' Anna ', email: ' Anna@Example.com ' });
    expect(asked.status).toBe(303);
    const codePage = await client.get(asked.location!);
    expect(visibleText(codePage.html)).toContain('We sent a 6-digit code to anna@example.com');
    const message = mail.lastTo('anna@example.com')!;
    expect(message.from).toBe('gate@example.com');
    expect(message.raw).toContain('Subject: Your Gatelink sign-in code');
    // No account has the address yet, so the code's end is given in UTC: 01:00 then, plus 10 minutes.
    expect(message.raw).toContain('valid for 10 minutes, until 01:10 UTC, and works once');
    const before = await cloud.ctx.db.selectFrom('customers').select('id').execute();
    expect(before).toHaveLength(0);

    const entered = await client.post('/signin/code', {
      ...carried(codePage),
      code: codeFor('anna@example.com'),
    });
    expect(entered.status).toBe(303);
    expect(entered.location).toBe('/barriers');
    const account = visibleText((await client.get('/account')).html);
    expect(account).toContain('Your account');
    expect(account).toContain('anna@example.com Confirmed');
    expect(account).toContain('You have no passkeys yet');
    expect((await client.get('/account')).html).toContain('value="Anna"');
  });

  it('says what is wrong with the name and address next to each field, and keeps what was typed', async () => {
    const client = new BrowserClient(cloud.app);
    await client.get('/signup');
    const refused = await client.post('/signup/email', {
      display_name: 'Ann\u202Ea',
      email: 'not an address',
    });
    expect(refused.status).toBe(400);
    const text = visibleText(refused.html);
    expect(text).toContain('There is a problem');
    expect(text).toContain('Use letters, digits and punctuation only');
    expect(text).toContain('Enter an e-mail address like name@example.com');
    expect(refused.html).toContain('value="not an address"');
    expect(refused.html).toContain('aria-invalid="true"');
  });
});

describe('signing in with an e-mail code', () => {
  it('signs into the account of the address, wherever the browser was going', async () => {
    const client = new BrowserClient(cloud.app);
    const codePage = await askForCode(client, 'ANNA@example.com', '/account');
    const entered = await client.post('/signin/code', {
      ...carried(codePage),
      code: codeFor('anna@example.com'),
    });
    expect(entered.location).toBe('/account');
    expect(visibleText((await client.get('/account')).html)).toContain('anna@example.com Confirmed');
    const accounts = await cloud.ctx.db.selectFrom('customers').select('id').execute();
    expect(accounts).toHaveLength(1);
  });

  it('asks for the 6 digits again without using a try when the code is mistyped', async () => {
    const client = new BrowserClient(cloud.app);
    const codePage = await askForCode(client, 'anna@example.com');
    const short = await client.post('/signin/code', { ...carried(codePage), code: '1234' });
    expect(short.status).toBe(400);
    expect(visibleText(short.html)).toContain('Enter the 6-digit code from the e-mail');
    const spaced = codeFor('anna@example.com').replace(/^(\d{3})/, '$1 ');
    const entered = await client.post('/signin/code', { ...carried(codePage), code: spaced });
    expect(entered.status).toBe(303);
  });

  it('looks the same, and sends a code, for an address with and without an account', async () => {
    const known = await askForCode(new BrowserClient(cloud.app), 'anna@example.com');
    const unknown = await askForCode(new BrowserClient(cloud.app), 'nobody@example.com');
    expect(visibleText(unknown.html).replace('nobody', 'anna')).toBe(visibleText(known.html));
    expect(mail.lastTo('nobody@example.com')!.raw.replace(/\d{6}/, '')).toContain('Your Gatelink code is');
  });

  it('makes an account for a new address that signs in, named after the address until it is changed', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    const codePage = await askForCode(client, 'bea.new@example.org');
    await client.post('/signin/code', { ...carried(codePage), code: codeFor('bea.new@example.org') });
    const account = await client.get('/account');
    expect(account.html).toContain('value="bea.new"');
    await client.post('/account/name', { display_name: 'Bea' });
    expect(visibleText((await client.get('/account?done=name-saved')).html)).toContain('Your name is saved.');
  });
});

describe('[attack:web.email-code-replay] a used or expired code', () => {
  it('is refused when used a second time, from any browser', async () => {
    nextHour();
    const anna = new BrowserClient(cloud.app);
    const codePage = await askForCode(anna, 'anna@example.com');
    const code = codeFor('anna@example.com');
    const pending = anna.cookie('gatelink-pending-code')!;
    expect((await anna.post('/signin/code', { ...carried(codePage), code })).status).toBe(303);
    // Signed in, Anna's browser waits for no code any more.
    expect(anna.cookie('gatelink-pending-code')).toBeUndefined();

    // A thief with the code and even a copy of the browser's pending code.
    const thief = new BrowserClient(cloud.app);
    thief.setCookie('gatelink-pending-code', pending);
    await thief.get('/signin/code');
    const replayed = await thief.post('/signin/code', { next: '/barriers', code });
    expect(replayed.status).toBe(400);
    expect(visibleText(replayed.html)).toContain('This code has already been used: each code works once.');
    expect(thief.cookie('gatelink-session')).toBeUndefined();
  });

  it('is refused after its 10 minutes', async () => {
    const client = new BrowserClient(cloud.app);
    const codePage = await askForCode(client, 'anna@example.com');
    const code = codeFor('anna@example.com');
    clock.advance(10 * 60 * 1000);
    const late = await client.post('/signin/code', { ...carried(codePage), code });
    expect(late.status).toBe(400);
    expect(visibleText(late.html)).toContain('This code has expired: codes work for 10 minutes.');
    expect(client.cookie('gatelink-session')).toBeUndefined();
  });

  it('is refused once a newer code was sent', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    await askForCode(client, 'anna@example.com');
    const first = codeFor('anna@example.com');
    const codePage = await askForCode(client, 'anna@example.com');
    const second = codeFor('anna@example.com');
    if (first === second) return; // one chance in a million: nothing to tell apart
    const old = await client.post('/signin/code', { ...carried(codePage), code: first });
    expect(old.status).toBe(400);
    expect(visibleText(old.html)).toContain('That is not the code we sent. Check the newest e-mail from us');
    expect((await client.post('/signin/code', { ...carried(codePage), code: second })).status).toBe(303);
  });
});

describe('[attack:web.email-code-guess] guessing codes and asking for them without end', () => {
  it('kills a code after 5 wrong tries, even the right code after them', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    const codePage = await askForCode(client, 'anna@example.com');
    const code = codeFor('anna@example.com');
    const wrong = (n: number) => String((Number(code) + n) % 1_000_000).padStart(6, '0');
    const said: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const guess = await client.post('/signin/code', { ...carried(codePage), code: wrong(n) });
      expect(guess.status).toBe(400);
      said.push(visibleText(guess.html));
    }
    expect(said[0]).toContain('4 tries left');
    expect(said[3]).toContain('1 try left');
    expect(said[4]).toContain('it was the last try for this code');
    const right = await client.post('/signin/code', { ...carried(codePage), code });
    expect(right.status).toBe(400);
    expect(visibleText(right.html)).toContain('This code has had 5 wrong tries and no longer works.');
    expect(client.cookie('gatelink-session')).toBeUndefined();
  });

  it('sends at most 5 codes an hour to one address, then answers 429 with Retry-After on the form', async () => {
    nextHour();
    const clients = Array.from({ length: 6 }, () => new BrowserClient(cloud.app));
    for (const client of clients.slice(0, 5)) await askForCode(client, 'flooded@example.com');
    const last = clients[5]!;
    await last.get('/signin');
    const refused = await last.post('/signin/email', { email: 'flooded@example.com' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    expect(visibleText(refused.html)).toContain('Too many codes were sent to this address.');
    expect(refused.html).toContain('value="flooded@example.com"');
    expect(mail.messages.filter((message) => message.to.includes('flooded@example.com'))).toHaveLength(5);
  });

  it('sends at most 10 codes a day to one address, whatever the hour', async () => {
    for (let hour = 0; hour < 2; hour++) {
      nextHour();
      for (let n = 0; n < 5; n++) await askForCode(new BrowserClient(cloud.app), 'daily@example.com');
    }
    nextHour();
    const client = new BrowserClient(cloud.app);
    await client.get('/signin');
    const refused = await client.post('/signin/email', { email: 'daily@example.com' });
    expect(refused.status).toBe(429);
    expect(visibleText(refused.html)).toContain('Too many codes were sent to this address today.');
  });

  it('sends at most 20 codes an hour from one address, to any addresses', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    for (let n = 0; n < 20; n++) await askForCode(client, `spread-${n}@example.com`);
    await client.get('/signin');
    const refused = await client.post('/signin/email', { email: 'spread-20@example.com' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(visibleText(refused.html)).toContain('Too many codes were asked for from your network.');
    expect(mail.lastTo('spread-20@example.com')).toBeUndefined();
  });

  it('takes at most 30 code tries an hour from one address, across codes and addresses', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    let codePage = await askForCode(client, 'tries-0@example.com');
    for (let n = 0; n < 30; n++) {
      if (n % 5 === 0) codePage = await askForCode(client, `tries-${n}@example.com`);
      const guess = await client.post('/signin/code', { ...carried(codePage), code: '000000' });
      expect(guess.status).toBe(400);
    }
    const refused = await client.post('/signin/code', { ...carried(codePage), code: '000000' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(visibleText(refused.html)).toContain('Too many codes were tried from your network.');
  });
});

describe('[attack:web.next-redirect] next= naming another site', () => {
  it('is replaced by /barriers on every step of signing in by code', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    const signin = await client.get('/signin?next=https%3A%2F%2Fevil.example%2Fphish');
    expect(signin.html).not.toContain('evil.example');
    const asked = await client.post('/signin/email', { email: 'anna@example.com', next: '//evil.example' });
    expect(asked.location).toBe('/signin/code?next=%2Fbarriers');
    const entered = await client.post('/signin/code', {
      next: 'https://evil.example/',
      code: codeFor('anna@example.com'),
    });
    expect(entered.location).toBe('/barriers');
    const already = await client.get('/signin?next=%2F%5Cevil.example');
    expect(already.location).toBe('/barriers');
    const kept = await client.get('/signup?next=%2Fc%2FABCDEFGHJKMN');
    expect(kept.location).toBe('/c/ABCDEFGHJKMN');
  });
});

/** next= values a browser would read as another site, or that Node cannot put in a Location header. */
const HOSTILE_NEXT = [
  '/\t/evil.example',
  '/%09/evil.example',
  '%2F%2Fevil.example',
  '/\\evil.example',
  '/%5Cevil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '/barriers\r\nSet-Cookie: taken=1',
  '/\u00a0/evil.example',
  '/\u2028/evil.example',
  '/\u0000/evil.example',
  '/barriers%E0%A4%A',
];

describe('[attack:web.next-invisible-characters] next= hiding another site in characters a browser drops', () => {
  it.each(HOSTILE_NEXT)(
    'a signed-in browser opening /signin or /signup with %j goes to /barriers',
    async (next) => {
      const customer = await createCustomer(cloud.ctx, { displayName: 'Signed In' });
      const client = await BrowserClient.signedIn(cloud, customer.id);
      for (const page of ['/signin', '/signup']) {
        const answer = await client.get(`${page}?next=${encodeURIComponent(next)}`);
        expect(answer.status, page).toBe(303);
        expect(answer.location, page).toBe('/barriers');
      }
    },
  );

  it.each(HOSTILE_NEXT)('the sign-in and sign-up pages carry /barriers, not %j', async (next) => {
    const client = new BrowserClient(cloud.app);
    for (const page of ['/signin', '/signup']) {
      const answer = await client.get(`${page}?next=${encodeURIComponent(next)}`);
      expect(answer.status, page).toBe(200);
      expect(answer.html).toContain('name="next" value="/barriers"');
      expect(answer.html).not.toContain('evil.example');
    }
  });
});

describe('[attack:web.next-header-injection] next= that Node cannot put in a header', () => {
  it('signs the new account in after the right code and lands on /barriers: the code is not spent for nothing', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    await client.get('/signup?next=%2F%E2%80%A8%2Fevil.example');
    const asked = await client.post('/signup/email', {
      display_name: 'Hostile Next',
      email: 'hostile-next@example.com',
      next: '/\u2028/evil.example',
    });
    expect(asked.status).toBe(303);
    expect(asked.location).toContain('next=%2Fbarriers');
    const codePage = await client.get(asked.location!);
    // The form as an attacker would rewrite it: next= with CR LF and a character outside Latin-1.
    const entered = await client.post('/signin/code', {
      ...carried(codePage),
      next: '/\r\n/evil.example\u2028',
      code: codeFor('hostile-next@example.com'),
    });
    expect(entered.status).toBe(303);
    expect(entered.location).toBe('/barriers');
    const account = await cloud.ctx.db
      .selectFrom('customers')
      .select('display_name')
      .where('email', '=', 'hostile-next@example.com')
      .executeTakeFirst();
    expect(account?.display_name).toBe('Hostile Next');
    const barriers = await client.get('/barriers');
    expect(barriers.status).toBe(200);
  });

  it.each(HOSTILE_NEXT)('signing in by code with %j lands on /barriers, never a 500', async (next) => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    // An address of its own for each case, so that no case counts against another's limits.
    const email = `code-next-${HOSTILE_NEXT.indexOf(next)}@example.com`;
    await createCustomer(cloud.ctx, { displayName: 'Code', email });
    await client.get('/signin');
    const asked = await client.post('/signin/email', { email, next });
    expect(asked.status, visibleText(asked.html)).toBe(303);
    expect(asked.location).toBe('/signin/code?next=%2Fbarriers');
    await client.get(asked.location!);
    const entered = await client.post('/signin/code', { next, code: codeFor(email) });
    expect(entered.status).toBe(303);
    expect(entered.location).toBe('/barriers');
  });
});

describe('confirming an address on the account', () => {
  it('saves an address only once its code is entered, and refuses one another account has', async () => {
    nextHour();
    const customer = await createCustomer(cloud.ctx, { displayName: 'Passkey Only' });
    const client = await BrowserClient.signedIn(cloud, customer.id);
    expect(visibleText((await client.get('/account')).html)).toContain('No e-mail address yet');
    const asked = await client.post('/account/email', { email: 'carl@example.net' });
    expect(asked.location).toBe('/account/email/code');
    expect(visibleText((await client.get('/account')).html)).toContain('No e-mail address yet');
    const codePage = await client.get(asked.location!);
    expect(visibleText(codePage.html)).toContain('Confirm your e-mail address');
    expect(visibleText(codePage.html)).toContain('We sent a 6-digit code to carl@example.net');
    expectNothingPersonal(urlsIn(codePage), ['carl', 'example.net']);
    const confirmed = await client.post('/account/email/code', { code: codeFor('carl@example.net') });
    expect(confirmed.location).toBe('/account?done=email-confirmed');
    expect(visibleText((await client.get(confirmed.location!)).html)).toContain('carl@example.net Confirmed');

    await createCustomer(cloud.ctx, { displayName: 'Held', email: 'held@example.net' });
    expect((await client.post('/account/email', { email: 'held@example.net' })).status).toBe(303);
    const taken = await client.post('/account/email/code', { code: codeFor('held@example.net') });
    expect(taken.status).toBe(409);
    expect(visibleText(taken.html)).toContain('This e-mail address belongs to another Gatelink account');
  });

  it("shows another account's pending address to nobody but that account", async () => {
    nextHour();
    const first = await createCustomer(cloud.ctx, { displayName: 'First On This Device' });
    const client = await BrowserClient.signedIn(cloud, first.id);
    await client.get('/account');
    expect((await client.post('/account/email', { email: 'first@example.net' })).status).toBe(303);
    // Someone else signed in on the same browser finds no code waiting for them.
    const second = await createCustomer(cloud.ctx, { displayName: 'Second' });
    const other = await BrowserClient.signedIn(cloud, second.id);
    other.setCookie('gatelink-pending-code', client.cookie('gatelink-pending-code')!);
    await other.get('/account');
    const page = await other.get('/account/email/code');
    expect(page.location).toBe('/account');
    expect((await other.post('/account/email/code', { code: codeFor('first@example.net') })).location).toBe(
      '/account',
    );
    expect(visibleText((await other.get('/account')).html)).toContain('No e-mail address yet');
  });
});

describe('the address and the name stay out of every URL', () => {
  const personal = ['quentin', 'oddname', 'q.hidden', 'hidden@', 'example.org'];

  it('signing up by code: every page and redirect, a reload and a new code, and it still signs in', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    const urls: string[] = [];
    const seen = (answer: PageAnswer) => {
      urls.push(...urlsIn(answer));
      return answer;
    };
    seen(await client.get('/signup?next=%2Fc%2FABCDEFGHJKMN'));
    const asked = seen(
      await client.post('/signup/email', {
        display_name: 'Quentin Oddname',
        email: 'Q.Hidden@Example.org',
        next: '/c/ABCDEFGHJKMN',
      }),
    );
    expect(asked.status).toBe(303);
    expect(asked.location).toBe('/signin/code?next=%2Fc%2FABCDEFGHJKMN');
    const codePage = seen(await client.get(asked.location!));
    expect(visibleText(codePage.html)).toContain('We sent a 6-digit code to q.hidden@example.org');
    expect(codePage.html).toContain(
      '<a href="/signup?next=%2Fc%2FABCDEFGHJKMN">Use another e-mail address</a>',
    );
    // A reload shows the same page: nothing it needs was in the address.
    expect(visibleText(seen(await client.get(asked.location!)).html)).toBe(visibleText(codePage.html));

    const again = seen(await client.post('/signup/email', carried(codePage, '/signup/email')));
    expect(again.location).toBe(asked.location);
    const wrong = seen(await client.post('/signin/code', { ...carried(codePage), code: '000000' }));
    expect(wrong.status).toBe(400);
    const entered = seen(
      await client.post('/signin/code', { ...carried(wrong), code: codeFor('q.hidden@example.org') }),
    );
    expect(entered.status).toBe(303);
    expect(entered.location).toBe('/c/ABCDEFGHJKMN');
    expectNothingPersonal(urls, personal);

    const account = await client.get('/account');
    expect(account.html).toContain('value="Quentin Oddname"');
    expect(visibleText(account.html)).toContain('q.hidden@example.org Confirmed');
  });

  it('signing in by code: every page and redirect, and it still signs in where it was going', async () => {
    nextHour();
    await createCustomer(cloud.ctx, { displayName: 'Quentin Oddname', email: 'q.hidden+in@example.org' });
    const client = new BrowserClient(cloud.app);
    const urls: string[] = [];
    const seen = (answer: PageAnswer) => {
      urls.push(...urlsIn(answer));
      return answer;
    };
    seen(await client.get('/signin?next=%2Faccount'));
    const asked = seen(
      await client.post('/signin/email', { email: 'q.hidden+in@example.org', next: '/account' }),
    );
    expect(asked.location).toBe('/signin/code?next=%2Faccount');
    const codePage = seen(await client.get(asked.location!));
    expect(visibleText(codePage.html)).toContain('We sent a 6-digit code to q.hidden+in@example.org');
    expect(codePage.html).toContain('<a href="/signin?next=%2Faccount">Use another e-mail address</a>');
    const again = seen(await client.post('/signin/email', carried(codePage, '/signin/email')));
    expect(again.location).toBe(asked.location);
    seen(await client.get(again.location!));
    const entered = seen(
      await client.post('/signin/code', { ...carried(codePage), code: codeFor('q.hidden+in@example.org') }),
    );
    expect(entered.location).toBe('/account');
    expectNothingPersonal(urls, personal);
    expect(visibleText((await client.get('/account')).html)).toContain('q.hidden+in@example.org Confirmed');
  });

  it('keeps them in a sealed cookie: not readable in it, and a changed one is worth nothing', async () => {
    nextHour();
    const client = new BrowserClient(cloud.app);
    await askForCode(client, 'sealed@example.com');
    const pending = client.cookie('gatelink-pending-code')!;
    expect(Buffer.from(pending, 'base64url').toString('latin1')).not.toContain('sealed');
    // One character of the authentication tag changed (every bit of a character inside the text counts).
    const flipped = `${pending.slice(0, 20)}${pending[20] === 'A' ? 'B' : 'A'}${pending.slice(21)}`;
    const forged = new BrowserClient(cloud.app);
    forged.setCookie('gatelink-pending-code', flipped);
    expect((await forged.get('/signin/code')).location).toBe('/signin?next=%2Fbarriers');
    // A browser that waits for no code (none asked for, or one asked for over an hour ago) starts again.
    expect((await new BrowserClient(cloud.app).get('/signin/code?next=%2Faccount')).location).toBe(
      '/signin?next=%2Faccount',
    );
    clock.advance(HOUR);
    expect((await client.get('/signin/code')).location).toBe('/signin?next=%2Fbarriers');
  });

  it('never lets a code sent to one address sign into another', async () => {
    nextHour();
    await createCustomer(cloud.ctx, { displayName: 'Bob', email: 'bob@example.com' });
    const client = new BrowserClient(cloud.app);
    await askForCode(client, 'bob@example.com');
    const bobs = codeFor('bob@example.com');
    // The same browser asks for another address: it now waits for that one's code, and Bob's is not it.
    const codePage = await askForCode(client, 'mallory@example.com');
    const tried = await client.post('/signin/code', {
      ...carried(codePage),
      email: 'bob@example.com',
      code: bobs,
    });
    expect(tried.status).toBe(400);
    expect(visibleText(tried.html)).toContain('That is not the code we sent');
    expect(client.cookie('gatelink-session')).toBeUndefined();
  });
});

describe('the pages and what stays behind', () => {
  it('carry no inline script, style or event handler', async () => {
    const customer = await createCustomer(cloud.ctx, {
      displayName: 'Inline Check',
      email: 'inline@example.com',
    });
    const signedIn = await BrowserClient.signedIn(cloud, customer.id);
    const codePage = await askForCode(new BrowserClient(cloud.app), 'inline@example.com');
    await signedIn.get('/account');
    await signedIn.post('/account/email', { email: 'inline@example.com' });
    const pages = [
      await new BrowserClient(cloud.app).get('/signin'),
      await new BrowserClient(cloud.app).get('/signup'),
      codePage,
      await signedIn.get('/account'),
      await signedIn.get('/account/email/code'),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
    }
  });

  it('ends the session a browser had before it signs in again', async () => {
    nextHour();
    const other = await createCustomer(cloud.ctx, { displayName: 'Earlier Session' });
    const client = await BrowserClient.signedIn(cloud, other.id);
    const planted = client.cookie('gatelink-session')!;
    await client.get('/account');
    expect((await client.post('/signin/email', { email: 'dan@example.com' })).status).toBe(303);
    const code = codeFor('dan@example.com');
    expect((await client.post('/signin/code', { code })).status).toBe(303);
    expect(client.cookie('gatelink-session')).not.toBe(planted);
    const stale = new BrowserClient(cloud.app);
    stale.setCookie('gatelink-session', planted);
    expect((await stale.get('/account')).location).toBe('/signin?next=%2Faccount');
  });

  it('purges codes a day after their end', async () => {
    const before = await cloud.ctx.db.selectFrom('email_codes').select('id').execute();
    expect(before.length).toBeGreaterThan(0);
    clock.advance(24 * HOUR + 11 * 60 * 1000);
    expect(await purgeEmailCodes(cloud.ctx)).toBe(before.length);
  });

  it('reads SMTP_URL and MAIL_FROM, and names either when it is wrong', () => {
    const config = loadCloudConfig({
      SMTP_URL: 'smtps://u:p@mail.example.com:465',
      MAIL_FROM: 'G <g@example.com>',
    });
    expect(config.smtpUrl).toBe('smtps://u:p@mail.example.com:465');
    expect(config.mailFrom).toBe('G <g@example.com>');
    expect(() => loadCloudConfig({ SMTP_URL: 'https://mail.example.com' })).toThrow(/^SMTP_URL=.*smtp:\/\//);
    expect(() => loadCloudConfig({ MAIL_FROM: 'a@b.c\r\nBcc: x@y.z' })).toThrow(/^MAIL_FROM=/);
  });
});

describe('without a mail server', () => {
  it('writes the code to the log at warn, where the demo shows it, when SMTP_URL is not set', async () => {
    const entries: LogEntry[] = [];
    const mailer = configuredMailer(loadCloudConfig({}), recordingLogger(entries), () => 'http://localhost');
    await mailer.sendCode({
      to: 'demo@example.com',
      code: '123456',
      validMinutes: 10,
      expiresAt: new Date('2026-11-23T01:10:00Z'),
      zone: 'UTC',
    });
    expect(entries).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'No SMTP_URL set: sign-in code for demo@example.com is 123456 (valid 10 minutes)',
      }),
    ]);
  });

  it('signs in with the code read from the log', async () => {
    const entries: LogEntry[] = [];
    const logged = await startTestCloud({ database, clock, mailer: logMailer(recordingLogger(entries)) });
    try {
      nextHour();
      const client = new BrowserClient(logged.app);
      await client.get('/signin');
      const asked = await client.post('/signin/email', { email: 'logged@example.com' });
      const code = /is (\d{6}) \(valid 10 minutes\)/.exec(entries.at(-1)?.msg ?? '')?.[1];
      const entered = await client.post('/signin/code', { code: code ?? '' });
      expect(asked.status).toBe(303);
      expect(entered.location).toBe('/barriers');
    } finally {
      await logged.stop();
    }
  });

  it('says on the form that the e-mail could not be sent when the mail server is unreachable', async () => {
    const closed = await freePort();
    const unreachable = await startTestCloud({
      database,
      clock,
      env: { SMTP_URL: `smtp://127.0.0.1:${closed}` },
    });
    try {
      nextHour();
      const client = new BrowserClient(unreachable.app);
      await client.get('/signin');
      const refused = await client.post('/signin/email', { email: 'unsent@example.com' });
      expect(refused.status).toBe(503);
      expect(visibleText(refused.html)).toContain('We could not send the e-mail just now');
    } finally {
      await unreachable.stop();
    }
  });
});
