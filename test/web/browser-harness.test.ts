import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The pages that need no account, in real Chromium: they load with no third-party request and pass axe; and
 * the installable application: its service worker takes over and shows the offline page without a network.
 */
describe.skipIf(chromiumMissing)('public pages in Chromium', () => {
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

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`the start and offline pages at ${viewport} size reach no other host and pass axe`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      for (const [name, path] of [
        ['start', '/'],
        ['offline', '/offline'],
      ] as const) {
        await page.goto(path);
        await expect.poll(() => page.title()).toContain('Gatelink');
        expect(await seriousAccessibilityViolations(page)).toEqual([]);
        await screenshot(page, name, viewport);
      }
      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  it('installs its service worker, which shows the offline page when the network is gone', async () => {
    const { context, page } = await newProfile(browser, cloud.baseUrl, 'phone');
    await page.goto('/');
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    // The page that registered the worker is not yet controlled by it; the next navigation is.
    await page.reload();
    await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
    await context.setOffline(true);
    await page.goto('/barriers').catch(() => {});
    await expect.poll(() => page.locator('h1').textContent()).toBe('You are offline');
    await screenshot(page, 'offline-from-worker', 'phone');
    await context.close();
  });
});
