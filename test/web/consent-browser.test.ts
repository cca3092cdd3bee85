import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyRequest, insertBarrier, type SecretAuth, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The request page, consent and the barrier pages in real Chromium, at a phone's and a desktop's size: each
 * reaches no other host, passes axe, and leaves a screenshot under test/artifacts/ to look at; the consent
 * form works as a person uses it (the date field appears with "until a date", withdrawing and declining ask
 * first).
 */
describe.skipIf(chromiumMissing)('request, consent and barriers in Chromium', () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let company: SecretAuth;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database });
    browser = await launchChromium();
    company = await secretCompany(cloud, 'Speedy Parcels & Co');
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
  });

  /** Opens `path`, checks it with axe and saves its screenshot. */
  async function look(page: Page, path: string | null, name: string, viewport: ViewportName): Promise<void> {
    if (path) await page.goto(path);
    await expect.poll(() => page.title()).toContain('Gatelink');
    expect(await seriousAccessibilityViolations(page), name).toEqual([]);
    await screenshot(page, name, viewport);
  }

  async function signIn(context: BrowserContext, customerId: number): Promise<void> {
    const value = await startSession(cloud.ctx, customerId);
    await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
  }

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`at ${viewport} size: the request page signed out and in, consent, the confirmation and the barrier pages`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const errors: string[] = [];
      // The unknown code's 404 and the form's 400 are the answers meant; Chromium logs every such status.
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
          errors.push(message.text());
        }
      });
      page.on('pageerror', (error) => errors.push(error.message));
      const customer = await signedInCustomer(cloud, `Chromium ${viewport}`);
      const barrier = await insertBarrier(cloud, customer.id, { name: 'Front gate', online: true });
      await insertBarrier(cloud, customer.id, {
        name: 'Garden door',
        labels: ['Garden door'],
        online: false,
      });
      const code = await companyRequest(cloud, company);

      await look(page, `/c/${code}`, 'request-signed-out', viewport);
      await look(page, '/c/ZZZZ-ZZZZ-ZZZZ', 'request-unknown', viewport);

      await signIn(context, customer.id);
      await look(page, `/c/${code}`, 'request-new', viewport);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('Waiting for your answer').waitFor();
      await expect.poll(() => page.getByLabel('Last day of access').isVisible()).toBe(false);
      await look(page, null, 'consent', viewport);

      await page.getByRole('button', { name: 'Grant access' }).click();
      await page.getByText('There is a problem').waitFor();
      await look(page, null, 'consent-errors', viewport);

      await page.getByLabel('Main gate').check();
      await page.getByLabel('Side door').check();
      await page.getByLabel('Until a date').check();
      await expect.poll(() => page.getByLabel('Last day of access').isVisible()).toBe(true);
      const lastDay = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString().slice(0, 10);
      await page.getByLabel('Last day of access').fill(lastDay);
      await page.getByRole('button', { name: 'Grant access' }).click();
      await page.getByText('Access granted').waitFor();
      await look(page, null, 'granted', viewport);

      await look(page, '/barriers', 'barriers', viewport);
      await look(page, `/barriers/${barrier.deviceId}`, 'barrier', viewport);
      const asked: string[] = [];
      page.once('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Withdraw access for Speedy Parcels & Co' }).click();
      await page.getByText('Access withdrawn').waitFor();
      expect(asked).toEqual(['Withdraw access for Speedy Parcels & Co?']);
      await look(page, null, 'barrier-withdrawn', viewport);

      const unwanted = await companyRequest(cloud, company);
      await page.goto(`/c/${unwanted}`);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('Waiting for your answer').waitFor();
      page.once('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Decline' }).click();
      await page.getByText('You declined this request').waitFor();
      expect(asked).toEqual([
        'Withdraw access for Speedy Parcels & Co?',
        'Decline the request from Speedy Parcels & Co?',
      ]);
      await look(page, null, 'declined', viewport);

      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
      // A dozen pages, each checked with axe and photographed: as the other stories in Chromium, more than the
      // 20 s of a single check on a busy machine.
    }, 90_000);
  }
});
