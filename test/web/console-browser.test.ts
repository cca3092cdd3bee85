import { domainToASCII } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  shootBothSizes,
  VIEWPORTS,
} from '../support/browser.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * The operator console in real Chromium (docs/design.md section 11.5): refused to a stranger, signed in with the
 * token, a domain company approved with the key it proved, a secret-mode one refused with a reason, and the
 * operators' page. Every page is checked with axe and saved at a phone's and a desktop's size under
 * test/artifacts/.
 */
/** A national domain: the console shows it in both spellings. */
const DOMAIN = domainToASCII('gärtnerei-sonne.example');

describe.skipIf(chromiumMissing)('an operator reviews companies in the console', () => {
  let keyFiles: KeyFileServer;
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let phone: { context: BrowserContext; page: Page; foreignRequests: string[] };
  let desktop: BrowserContext;
  const key = SigningKey.generate();

  beforeAll(async () => {
    keyFiles = new KeyFileServer();
    await keyFiles.start();
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
    browser = await launchChromium();
    phone = await newProfile(browser, cloud.baseUrl, 'phone');
    desktop = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
    await keyFiles?.stop();
  });

  const shot = (name: string) => shootBothSizes(phone, desktop, name);

  it('signs in with the token, approves a company with its proven key, and refuses another with a reason', async () => {
    keyFiles.publish(DOMAIN, key.publicKey.base64);
    const proven = await companyOwner(cloud, { name: 'Gärtnerei Sonne', domain: DOMAIN });
    await cloud.ctx.db
      .updateTable('companies')
      .set({
        key_published: key.publicKey.base64,
        key_published_at: cloud.ctx.clock.now(),
        key_proven: key.publicKey.base64,
      })
      .where('id', '=', proven.companyId)
      .execute();
    await companyOwner(cloud, { name: 'Unknown Couriers', domain: 'unknown-couriers.example' });
    const secretMode = await companyOwner(cloud, { name: 'Handyman Ltd' });
    await secretCompany(cloud, 'Speedy Parcels & Co');

    const { page } = phone;
    const refused = await page.goto('/console');
    expect(refused?.status()).toBe(403);
    expect(await page.locator('main').innerText()).toContain('Operators only');
    await shot('console-01-refused');

    await page.getByRole('link', { name: 'Sign in with the operator token' }).click();
    await page.getByLabel('Operator token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in to the console' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('This is not the operator token.');
    await shot('console-02-signin-wrong');

    await page.getByLabel('Operator token').fill(cloud.operatorToken);
    await page.getByRole('button', { name: 'Sign in to the console' }).click();
    await page.waitForURL((url) => url.pathname === '/console');
    const list = await page.locator('main').innerText();
    expect(list.indexOf('Gärtnerei Sonne')).toBeLessThan(list.indexOf('Speedy Parcels & Co'));
    expect(list).toContain(key.publicKey.fingerprint);
    await shot('console-03-companies');

    await page.getByRole('link', { name: 'Gärtnerei Sonne' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Holding the key: proved');
    await shot('console-04-company-pending');

    await page.getByRole('button', { name: 'Approve Gärtnerei Sonne' }).click();
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain(`The key pinned is ${key.publicKey.fingerprint}`);
    expect(await page.locator('main').innerText()).toContain('operator token approved the company');
    await shot('console-05-company-approved');

    await page.goto(`/console/companies/${secretMode.companyId}`);
    await page.getByRole('button', { name: 'Refuse approval' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Give the reason');
    await shot('console-06-reason-missing');
    await page.getByLabel('Reason').fill('We could not reach you at the contact address you gave.');
    await page.getByRole('button', { name: 'Refuse approval' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Approval refused');
    await shot('console-07-company-refused');

    await page.goto('/console?status=rejected');
    expect(await page.locator('main').innerText()).toContain('Handyman Ltd');
    await shot('console-08-filtered');

    await page.getByRole('link', { name: 'Operators' }).click();
    await page.waitForURL((url) => url.pathname === '/console/operators');
    await shot('console-09-operators');

    await page.getByRole('button', { name: 'Sign out of the console' }).click();
    await page.waitForURL((url) => url.pathname === '/console/signin');
    await shot('console-10-signin');
    expect(phone.foreignRequests).toEqual([]);
  }, 120_000);
});
