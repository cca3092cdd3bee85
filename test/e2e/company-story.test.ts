import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addVirtualAuthenticator,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  shootBothSizes,
  VIEWPORTS,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { pngLogo } from '../support/logo-files.js';

/**
 * A company's first hour in real Chromium (issue 14, docs/design.md section 11): a new person signs up with a
 * passkey and registers their company with its domain; the pending company's page says what happens next; the
 * owner adds a colleague; the company makes its key pair with the project's tool (`gatelink-company`), publishes
 * it on a local key-file server, checks it and proves it holds the key; an operator signs in to the console with
 * the operator token and approves it; the company uploads its logo and adds a callback endpoint; a call signed
 * by the tool then works, and the customer's page of that request shows the logo; the company's requests and
 * openings list it. Every page is saved at a phone's and a desktop's size under test/artifacts/ and checked with
 * axe.
 */
const TOOL = join(import.meta.dirname, '..', '..', 'company', 'main.ts');
const TSX = join(import.meta.dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');

/** Runs `gatelink-company` as a company runs it; its standard output. */
async function companyTool(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [TSX, TOOL, ...args]);
  return stdout;
}
const DOMAIN = 'bäckerei-müller.example';

describe.skipIf(chromiumMissing)('a company registers and sets itself up', () => {
  let keyFiles: KeyFileServer;
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let phone: { context: BrowserContext; page: Page; foreignRequests: string[] };
  let desktop: BrowserContext;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatelink-company-'));
    keyFiles = new KeyFileServer();
    await keyFiles.start();
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
    browser = await launchChromium();
    phone = await newProfile(browser, cloud.baseUrl, 'phone');
    phone.page.on('dialog', (dialog) => void dialog.accept());
    await addVirtualAuthenticator(phone.page);
    desktop = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
    await keyFiles?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const shot = (name: string) => shootBothSizes(phone, desktop, name);

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

    // The key pair, made by the project's tool, published on the domain, checked and proved.
    const keyPath = join(dir, 'company-key.json');
    const made = await companyTool(['keygen', '--domain', DOMAIN, '--out', keyPath]);
    const published = /\{"key":"[^"]+"\}/.exec(made)![0];
    const ascii = /https:\/\/([^/]+)\/\.well-known\/service\.json/.exec(made)![1]!;
    keyFiles.publishRaw(ascii, published);
    await page.goto(companyPath);
    await page.getByRole('link', { name: 'API access' }).first().click();
    await page.getByRole('button', { name: 'Check my key file' }).click();
    await page.getByText('Key file checked').waitFor();
    const challenge = (await page.locator('pre', { hasText: /^gatelink-key-proof:/ }).textContent())!;
    const proof = (await companyTool(['prove', '--key', keyPath, '--text', challenge])).trim();
    await page.getByLabel('Signature').fill(proof);
    await page.getByRole('button', { name: 'Send the proof' }).click();
    await page.getByText('Proof accepted').waitFor();
    await shot('company-05-access-proved');

    // An operator approves it in the console, signed in with the operator token.
    const operator = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
    const consolePage = await operator.newPage();
    await consolePage.goto('/console/signin');
    await consolePage.getByLabel('Operator token').fill(cloud.operatorToken);
    await consolePage.getByRole('button', { name: 'Sign in to the console' }).click();
    await consolePage.getByRole('link', { name: 'Bäckerei Müller' }).click();
    await consolePage.getByRole('button', { name: 'Approve Bäckerei Müller' }).click();
    await expect.poll(() => consolePage.locator('main').innerText()).toContain('Approved');
    await operator.close();
    await page.goto(companyPath);
    expect(await page.locator('main').innerText()).toContain('Your company can call the API');
    await shot('company-06-approved');

    // Its logo, and where its events go.
    await page.getByRole('link', { name: 'Logo' }).click();
    await page.getByLabel('Logo image').setInputFiles({
      name: 'logo.png',
      mimeType: 'image/png',
      buffer: await pngLogo(),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('Logo saved.').waitFor();
    await shot('company-07-logo');
    await page.getByRole('link', { name: 'Callback' }).click();
    await page.getByLabel('Callback address').fill('https://93.184.216.34/gatelink');
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    await page.getByText('Endpoint added.').waitFor();
    await shot('company-08-callback');
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('A test event joined the company').waitFor();
    await shot('company-08-events');

    // The first call, signed by the tool: a request whose page shows the customer the logo.
    const printed = await companyTool([
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'request',
      '--body',
      '{"ref":"ORDER-1"}',
    ]);
    expect(printed).toMatch(/^HTTP 200\n/);
    const answer = JSON.parse(printed.slice(printed.indexOf('\n') + 1)) as { code: string; url: string };
    const customer = await browser.newContext({ viewport: VIEWPORTS.phone, baseURL: cloud.baseUrl });
    const customerPage = await customer.newPage();
    await customerPage.goto(answer.url);
    const logo = customerPage.locator('main img[src^="/logos/"]').first();
    await logo.waitFor();
    expect(await logo.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(256);
    await screenshot(customerPage, 'company-09-customer-sees-logo', 'phone');
    await customer.close();

    await page.getByRole('link', { name: 'Requests' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('ORDER-1');
    await shot('company-10-requests');
    await page.getByRole('link', { name: 'Openings' }).click();
    await shot('company-11-openings');
  }, 180_000);
});
