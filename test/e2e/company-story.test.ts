import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addVirtualAuthenticator,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  VIEWPORTS,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * A company's first hour in real Chromium (issue 14, docs/design.md section 11): a new person signs up with a
 * passkey and registers their company with its domain; the pending company's page says what happens next; the
 * owner adds a colleague. Every page is saved at a phone's and a desktop's size under test/artifacts/ and
 * checked with axe.
 */
const DOMAIN = 'bäckerei-müller.example';

describe.skipIf(chromiumMissing)('a company registers and sets itself up', () => {
  let keyFiles: KeyFileServer;
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let phone: { context: BrowserContext; page: Page; foreignRequests: string[] };
  let desktop: BrowserContext;

  beforeAll(async () => {
    keyFiles = new KeyFileServer();
    await keyFiles.start();
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
    browser = await launchChromium();
    phone = await newProfile(browser, cloud.baseUrl, 'phone');
    phone.page.on('dialog', (dialog) => void dialog.accept());
    await addVirtualAuthenticator(phone.page);
    desktop = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
    await keyFiles?.stop();
  });

  /** Saves the phone's page, and the same address in a desktop window with the same cookies, and runs axe on both. */
  async function shot(name: string) {
    const page = phone.page;
    expect(await seriousAccessibilityViolations(page), `${name} at phone size`).toEqual([]);
    await screenshot(page, name, 'phone');
    await desktop.clearCookies();
    await desktop.addCookies(await phone.context.cookies());
    const wide = await desktop.newPage();
    await wide.goto(page.url());
    expect(await seriousAccessibilityViolations(wide), `${name} at desktop size`).toEqual([]);
    await screenshot(wide, name, 'desktop');
    await wide.close();
  }

  it('registers, and sets the company up', async () => {
    const { page } = phone;
    await page.goto('/');
    await page.getByRole('link', { name: 'Register your company' }).click();
    await page.waitForURL((url) => url.pathname === '/signin');
    await page.locator('a[href^="/signup"]').first().click();
    await page.locator('input[name="display_name"]').fill('Bea Müller');
    await page.locator('button[data-passkey]').click();
    await page.waitForURL((url) => url.pathname === '/company/new');
    await shot('company-01-register');

    await page.getByLabel('Company name').fill('Bäckerei Müller');
    await page.getByLabel('Contact e-mail').fill('office@baeckerei.example');
    await page.getByLabel('Domain (optional)').fill(DOMAIN);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL((url) => /^\/company\/\d+$/.test(url.pathname));
    const companyPath = new URL(page.url()).pathname;
    await expect.poll(() => page.locator('main').innerText()).toContain('Waiting for approval');
    expect(await page.locator('main').innerText()).toContain('What happens next');
    await shot('company-02-pending-overview');

    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByLabel('Their e-mail address').fill('colleague@baeckerei.example');
    await page.getByRole('button', { name: 'Add member' }).click();
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain('colleague@baeckerei.example is added');
    await shot('company-03-members');

    await page.goto('/company');
    expect(await page.locator('main').innerText()).toContain('Bäckerei Müller');
    await shot('company-04-companies');
    expect(companyPath).toMatch(/^\/company\/\d+$/);
  });
});
