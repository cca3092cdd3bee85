import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { pngLogo } from '../support/logo-files.js';

/**
 * The logo page in real Chromium at a phone's and a desktop's size (docs/design.md section 11.3): a file chosen
 * in the file input is uploaded and shown, a refused one is told beside the field; each state passes axe,
 * reaches no other host and leaves a screenshot under test/artifacts/.
 */
describe.skipIf(chromiumMissing)('the logo page in Chromium', { timeout: BROWSER_STORY_TIMEOUT_MS }, () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
  });

  async function look(page: Page, name: string, viewport: ViewportName): Promise<void> {
    await expect.poll(() => page.title()).toContain('Gatelink');
    expect(await seriousAccessibilityViolations(page), name).toEqual([]);
    await screenshot(page, name, viewport);
  }

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`at ${viewport} size: uploads a logo through the file input, shows it, and tells a refusal`, async () => {
      const owner = await companyOwner(cloud, {
        name: 'Speedy Parcels & Co',
        domain: `${viewport}.speedy.example`,
      });
      await cloud.ctx.db
        .updateTable('companies')
        .set({ key_pub: 'pinned-key-of-the-test' })
        .where('id', '=', owner.companyId)
        .execute();
      await approveDirectly(cloud, owner.companyId);
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
          errors.push(message.text());
        }
      });
      page.on('pageerror', (error) => errors.push(error.message));
      const session = await startSession(cloud.ctx, owner.customerId);
      await context.addCookies([{ name: 'gatelink-session', value: session, url: cloud.baseUrl }]);

      await page.goto(`/company/${owner.companyId}/logo`);
      await page.getByText('No logo yet').waitFor();
      await look(page, 'company-logo-empty', viewport);

      await page.getByLabel('Logo image').setInputFiles({
        name: 'wide.png',
        mimeType: 'image/png',
        buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByText('There is a problem').waitFor();
      expect(await page.locator('#logo-error').textContent()).toContain('SVG logos are not accepted');
      await look(page, 'company-logo-refused', viewport);

      await page.getByLabel('Logo image').setInputFiles({
        name: 'logo.png',
        mimeType: 'image/png',
        buffer: await pngLogo(512),
      });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByText('Logo saved.').waitFor();
      const preview = page.getByAltText('Logo of Speedy Parcels & Co');
      await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(256);
      await expect
        .poll(() => page.locator('.company img.logo').evaluate((img: HTMLImageElement) => img.complete))
        .toBe(true);
      await look(page, 'company-logo', viewport);

      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});
