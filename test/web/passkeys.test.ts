import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logMailer } from '../../cloud/links/mail/mailer.js';
import { purgeCeremonies } from '../../cloud/rules/passkeys/challenges.js';
import {
  addVirtualAuthenticator,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type LogEntry, recordingLogger } from '../support/recording-logger.js';

/**
 * Accounts in real Chromium (docs/design.md section 10.2): passkeys made and used by its virtual authenticators,
 * the e-mail code pages, each page checked with axe and photographed at a phone's and a desktop's size.
 */
/** What a browser is asked for, seen without one. */
describe('the passkey options', () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  const clock = new FakeClock(new Date('2026-11-23T10:00:00Z'));

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, clock });
  });

  afterAll(async () => {
    await cloud?.stop();
    await database?.close();
  });

  it('ask for a discoverable passkey of this host, verified where the authenticator can, within 5 minutes', async () => {
    const client = new BrowserClient(cloud.app);
    await client.get('/signup');
    const begun = await client.postJson('/signup/passkey/options', { display_name: 'Options Check' });
    expect(begun.status).toBe(200);
    const { ceremony, options } = JSON.parse(begun.html);
    expect(ceremony).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(options.rp).toEqual({ id: 'localhost', name: 'Gatelink' });
    expect(options.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'preferred',
    });
    expect(options.attestation).toBe('none');
    expect(options.timeout).toBe(300_000);
    // The same on every Node.js the cloud runs on: Ed25519, ES256, RS256, and no algorithm only some can check.
    expect(options.pubKeyCredParams.map((param: { alg: number }) => param.alg)).toEqual([-8, -7, -257]);
    const signIn = JSON.parse((await client.postJson('/signin/passkey/options', {})).html);
    expect(signIn.options.allowCredentials ?? []).toEqual([]);
    expect(signIn.options.rpId).toBe('localhost');
  });

  it('refuse a name that is not printable text before any ceremony starts, naming the field', async () => {
    const client = new BrowserClient(cloud.app);
    await client.get('/signup');
    const refused = await client.postJson('/signup/passkey/options', { display_name: '  ' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.html)).toMatchObject({
      error: 'invalid_field',
      field: 'display_name',
      message: 'Enter your name',
    });
  });

  it('are purged once their 5 minutes are over', async () => {
    const client = new BrowserClient(cloud.app);
    await client.get('/signin');
    await client.postJson('/signin/passkey/options', {});
    expect(await purgeCeremonies(cloud.ctx)).toBe(0);
    clock.advance(5 * 60 * 1000);
    expect(await purgeCeremonies(cloud.ctx)).toBeGreaterThan(0);
    expect(await cloud.ctx.db.selectFrom('webauthn_challenges').select('id').execute()).toEqual([]);
  });
});

// A busy two-core machine runs Chromium and the cloud side by side: room for every wait to take its time.
describe.skipIf(chromiumMissing)('accounts in Chromium', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  const log: LogEntry[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, mailer: logMailer(recordingLogger(log)) });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
  });

  /** A URL predicate: this path and query on our site, exactly. */
  function at(pathAndQuery: string): (url: URL) => boolean {
    return (url) => url.pathname + url.search === pathAndQuery;
  }

  /** The page passes axe and is photographed as `name` at this size. */
  async function look(page: Page, name: string, viewport: ViewportName): Promise<void> {
    await expect.poll(() => page.title()).toContain('Gatelink');
    expect(await seriousAccessibilityViolations(page), name).toEqual([]);
    await screenshot(page, name, viewport);
  }

  /** The newest code the cloud wrote to its log for `email`. */
  function loggedCode(email: string): string {
    const entry = log.findLast((one) => one.msg.includes(`code for ${email} is`));
    return /is (\d{6})/.exec(entry?.msg ?? '')?.[1] ?? '';
  }

  it('a customer signs up with a passkey, signs out and in with it, adds, renames and removes passkeys', async () => {
    const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, 'phone');
    const phone = await addVirtualAuthenticator(page);
    await page.goto('/signup');
    await look(page, 'signup', 'phone');
    await page.getByLabel('Your name').fill('Anna Example');
    await page.getByRole('button', { name: 'Create with a passkey' }).click();
    await page.waitForURL(at('/barriers'));
    expect(await phone.credentialCount()).toBe(1);

    await page.goto('/account');
    await expect.poll(() => page.getByLabel('Your name').inputValue()).toBe('Anna Example');
    const passkeys = page.locator('ul.passkeys > li');
    await expect.poll(() => passkeys.count()).toBe(1);
    const main = () => page.locator('main').innerText();
    await expect.poll(main).toContain('This passkey is your only way to sign in, so it cannot be removed.');
    expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    await look(page, 'account-passkey', 'phone');

    await page.getByRole('button', { name: 'Sign out on this device' }).click();
    await page.waitForURL(at('/signin?signed_out=1'));
    await expect.poll(main).toContain('You are signed out.');
    await look(page, 'signin', 'phone');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(at('/barriers'));
    await page.goto('/account');
    // Each time in the reader's zone, named: UTC, or the zone the page's script proposed from the browser.
    await expect
      .poll(main)
      .toMatch(/Added \d+ \w+ \d{4}, \d\d:\d\d \S+, last used \d+ \w+ \d{4}, \d\d:\d\d \S+/);

    // A security key as a second authenticator: the phone's own already holds a passkey for this account.
    const key = await addVirtualAuthenticator(page, { transport: 'usb' });
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(at('/account?done=passkey-added'));
    await expect.poll(() => passkeys.count()).toBe(2);
    expect(await key.credentialCount()).toBe(1);
    await expect.poll(main).toContain('Passkey added. You can sign in with it from now on.');

    await passkeys.nth(1).getByText('Rename').click();
    await passkeys.nth(1).getByLabel('New name for this passkey').fill('Blue security key');
    await passkeys.nth(1).getByRole('button', { name: 'Save name' }).click();
    await page.waitForURL(at('/account?done=passkey-renamed'));
    await expect.poll(() => passkeys.nth(1).innerText()).toContain('Blue security key');
    await look(page, 'account-two-passkeys', 'phone');

    page.once('dialog', (dialog) => void dialog.accept());
    await passkeys
      .nth(0)
      .getByRole('button', { name: /^Remove/ })
      .click();
    await page.waitForURL(at('/account?done=passkey-removed'));
    await expect.poll(() => passkeys.count()).toBe(1);
    await expect.poll(main).toContain('This passkey is your only way to sign in');
    expect(await passkeys.nth(0).innerText()).toContain('Blue security key');

    // The phone still holds the removed passkey; with the security key gone it is all the browser can offer.
    await key.remove();
    await page.getByRole('button', { name: 'Sign out on this device' }).click();
    await page.waitForURL(at('/signin?signed_out=1'));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect
      .poll(() => page.getByRole('status').last().innerText())
      .toContain('This passkey is not registered with Gatelink');
    expect(page.url()).toContain('/signin');
    expect(foreignRequests).toEqual([]);
    await context.close();
  });

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`the sign-up, sign-in, code and account pages at ${viewport} size pass axe, with an e-mail code`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const email = `${viewport}@example.com`;
      await page.goto('/signup');
      if (viewport === 'desktop') await look(page, 'signup', viewport);
      await page.getByLabel('Your name').fill('\u202Eevil');
      await page.getByLabel(/^E-mail address/).fill('not-an-address');
      await page.getByRole('button', { name: 'Sign up with an e-mail code' }).click();
      await expect.poll(() => page.getByRole('alert').innerText()).toContain('There is a problem');
      await look(page, 'signup-errors', viewport);

      await page.getByLabel('Your name').fill(`Bea ${viewport}`);
      await page.getByLabel(/^E-mail address/).fill(email);
      await page.getByRole('button', { name: 'Sign up with an e-mail code' }).click();
      await page.waitForURL((url) => url.pathname === '/signin/code');
      await expect
        .poll(() => page.locator('main').innerText())
        .toContain(`We sent a 6-digit code to ${email}`);
      // Neither the address nor the name is in the address bar, nor so in the history.
      expect(page.url()).not.toMatch(/example|%40|@|Bea/i);
      await look(page, 'signin-code', viewport);
      await page.getByLabel('Code from the e-mail').fill('000000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.getByRole('alert').innerText()).toContain('That is not the code we sent');
      await look(page, 'signin-code-error', viewport);
      await page.getByLabel('Code from the e-mail').fill(loggedCode(email));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(at('/barriers'));

      await page.goto('/account');
      await expect.poll(() => page.locator('main').innerText()).toContain(`${email}\nConfirmed`);
      await look(page, 'account-email', viewport);
      if (viewport === 'desktop') {
        await page.goto('/signin');
        await look(page, 'signin', viewport);
      }
      expect(foreignRequests).toEqual([]);
      await context.close();
    });
  }

  it('a passkey sign-up with an e-mail address saves the address only once its code is entered', async () => {
    const { context, page } = await newProfile(browser, cloud.baseUrl, 'phone');
    await addVirtualAuthenticator(page);
    await page.goto('/signup?next=/account');
    await page.getByLabel('Your name').fill('Cleo');
    await page.getByLabel(/^E-mail address/).fill('Cleo@Example.com');
    await page.getByRole('button', { name: 'Create with a passkey' }).click();
    await page.waitForURL((url) => url.pathname === '/account/email/code');
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain('We sent a 6-digit code to cleo@example.com');
    expect(page.url()).not.toMatch(/cleo|example|%40|@/i);
    const before = await cloud.ctx.db
      .selectFrom('customers')
      .select('email')
      .where('display_name', '=', 'Cleo')
      .executeTakeFirstOrThrow();
    expect(before.email).toBeNull();
    await page.getByLabel('Code from the e-mail').fill(loggedCode('cleo@example.com'));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(at('/account'));
    await expect.poll(() => page.locator('main').innerText()).toContain('cleo@example.com\nConfirmed');
    // With a confirmed address, the one passkey may go: the address is another way in.
    expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(1);
    await context.close();
  });

  it('says where this browser cannot use passkeys, and hides their buttons', async () => {
    const { context, page } = await newProfile(browser, cloud.baseUrl, 'phone');
    await page.addInitScript(() => {
      Reflect.deleteProperty(globalThis, 'PublicKeyCredential');
    });
    await page.goto('/signin');
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain('This browser cannot use passkeys. Sign in with an e-mail code below.');
    expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).toBe(false);
    await look(page, 'signin-no-passkeys', 'phone');
    await context.close();
  });

  describe('[attack:web.passkey-foreign] passkey answers made for something else', () => {
    /** A real sign-in answer from Chromium's authenticator, for a ceremony started by the page's own origin. */
    async function signInAnswer(
      page: Page,
    ): Promise<{ ceremony: string; response: AuthenticationResponseJSON }> {
      return page.evaluate(async () => {
        const csrf = document.querySelector<HTMLInputElement>('input[name="_csrf"]')!.value;
        const started = await fetch('/signin/passkey/options', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf },
          body: '{}',
        });
        const begun = await started.json();
        const library = (globalThis as unknown as { SimpleWebAuthnBrowser: PasskeyLibrary })
          .SimpleWebAuthnBrowser;
        return {
          ceremony: begun.ceremony,
          response: await library.startAuthentication({ optionsJSON: begun.options }),
        };
      });
    }

    /** A signed-in Chromium profile with one passkey, as a customer who signed up with it. */
    async function customerWithPasskey(name: string) {
      const profile = await newProfile(browser, cloud.baseUrl, 'phone');
      await addVirtualAuthenticator(profile.page);
      await profile.page.goto('/signup');
      await profile.page.getByLabel('Your name').fill(name);
      await profile.page.getByRole('button', { name: 'Create with a passkey' }).click();
      await profile.page.waitForURL(at('/barriers'));
      const row = await cloud.ctx.db
        .selectFrom('customers')
        .innerJoin('passkeys', 'passkeys.customer_id', 'customers.id')
        .select(['customers.id as customerId', 'passkeys.id as passkeyId'])
        .where('customers.display_name', '=', name)
        .executeTakeFirstOrThrow();
      return { ...profile, ...row };
    }

    it('refuses an answer for another challenge, and one played a second time', async () => {
      const anna = await customerWithPasskey('Replay Target');
      await anna.page.goto('/signin?next=/account');
      const answer = await signInAnswer(anna.page);

      const attacker = new BrowserClient(cloud.app);
      await attacker.get('/signin');
      const other = await attacker.postJson('/signin/passkey/options', {});
      const { ceremony: otherCeremony } = JSON.parse(other.html) as { ceremony: string };
      const foreign = await attacker.postJson('/signin/passkey/verify', {
        ...answer,
        ceremony: otherCeremony,
      });
      expect(foreign.status).toBe(400);
      expect(JSON.parse(foreign.html).error).toBe('passkey_refused');
      expect(attacker.cookie('gatelink-session')).toBeUndefined();

      const honest = new BrowserClient(cloud.app);
      await honest.get('/signin');
      const first = await honest.postJson('/signin/passkey/verify', answer);
      expect(first.status).toBe(200);
      expect(JSON.parse(first.html).redirect).toBe('/barriers');
      const replayed = await attacker.postJson('/signin/passkey/verify', answer);
      expect(replayed.status).toBe(400);
      expect(JSON.parse(replayed.html).error).toBe('passkey_refused');
      expect(attacker.cookie('gatelink-session')).toBeUndefined();
      await anna.context.close();
    });

    it('refuses an answer made on another origin that relayed our challenge', async () => {
      // Another site on the same host name (a passkey's relying party is the host, not the port) shares our
      // database, so the ceremony it started is one we know: only the answer's origin gives it away.
      const relay = await startTestCloud({ database });
      try {
        const anna = await customerWithPasskey('Relay Target');
        // Cookies do not tell ports apart: signed in here, the browser would be signed in there too.
        await anna.context.clearCookies();
        await anna.page.goto(`${relay.baseUrl}/signin`);
        const answer = await signInAnswer(anna.page);
        const client = new BrowserClient(cloud.app);
        await client.get('/signin');
        const relayed = await client.postJson('/signin/passkey/verify', answer);
        expect(relayed.status).toBe(400);
        expect(JSON.parse(relayed.html).error).toBe('passkey_refused');
        expect(client.cookie('gatelink-session')).toBeUndefined();
        await anna.context.close();
      } finally {
        await relay.stop();
      }
    });

    it("refuses to add a passkey made in another customer's ceremony", async () => {
      const anna = await customerWithPasskey('Adding Owner');
      await anna.page.goto('/account');
      const made = await anna.page.evaluate(async () => {
        const csrf = document.querySelector<HTMLInputElement>('input[name="_csrf"]')!.value;
        const started = await fetch('/account/passkeys/options', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf },
          body: '{}',
        });
        const begun = await started.json();
        const library = (globalThis as unknown as { SimpleWebAuthnBrowser: PasskeyLibrary })
          .SimpleWebAuthnBrowser;
        // The phone's authenticator already holds Anna's passkey; let it make another regardless.
        const options = { ...begun.options, excludeCredentials: [] };
        return {
          ceremony: begun.ceremony,
          response: await library.startRegistration({ optionsJSON: options }),
        };
      });
      const bea = await customerWithPasskey('Adding Intruder');
      const intruder = await BrowserClient.signedIn(cloud, bea.customerId);
      await intruder.get('/account');
      const stolen = await intruder.postJson('/account/passkeys/verify', made);
      expect(stolen.status).toBe(400);
      expect(JSON.parse(stolen.html).error).toBe('passkey_refused');
      const keys = await cloud.ctx.db
        .selectFrom('passkeys')
        .select('customer_id')
        .where('customer_id', 'in', [anna.customerId, bea.customerId])
        .execute();
      expect(keys.map((key) => key.customer_id).sort()).toEqual([anna.customerId, bea.customerId].sort());
      await anna.context.close();
      await bea.context.close();
    });

    it("refuses to remove an account's last way in, or another customer's passkey", async () => {
      const anna = await customerWithPasskey('Last Way In');
      const bea = await customerWithPasskey('Other Customer');
      const client = await BrowserClient.signedIn(cloud, anna.customerId);
      await client.get('/account');
      const last = await client.post(`/account/passkeys/${anna.passkeyId}/remove`);
      expect(last.status).toBe(409);
      expect(visibleText(last.html)).toContain('This passkey is your only way to sign in');
      const foreign = await client.post(`/account/passkeys/${bea.passkeyId}/remove`);
      expect(foreign.status).toBe(404);
      const renamed = await client.post(`/account/passkeys/${bea.passkeyId}/name`, { name: 'Mine now' });
      expect(renamed.status).toBe(404);
      const left = await cloud.ctx.db
        .selectFrom('passkeys')
        .select(['id', 'name'])
        .where('id', 'in', [anna.passkeyId, bea.passkeyId])
        .execute();
      expect(left).toHaveLength(2);
      expect(left.map((key) => key.name)).not.toContain('Mine now');
      await anna.context.close();
      await bea.context.close();
    });
  });
});

interface PasskeyLibrary {
  startAuthentication(options: { optionsJSON: unknown }): Promise<AuthenticationResponseJSON>;
  startRegistration(options: { optionsJSON: unknown }): Promise<RegistrationResponseJSON>;
}
