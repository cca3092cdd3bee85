import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS } from '../../shared/company-api/calls.js';
import { ERRORS } from '../../shared/errors.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The company API's reference page in real Chromium at a phone's and a desktop's size (docs/design.md section
 * 1.1): every action with its fields, limits and errors, no serious accessibility fault, nothing from another
 * host, no script or style refused by the Content-Security-Policy, and a screenshot under test/artifacts/.
 */
describe.skipIf(chromiumMissing)(
  'the API reference page in Chromium',
  { timeout: BROWSER_STORY_TIMEOUT_MS },
  () => {
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
      it(`at ${viewport} size: lists each action with its fields, limits and errors, and passes axe`, async () => {
        const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
        const errors: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        page.on('pageerror', (error) => errors.push(error.message));

        const response = await page.goto('/api/reference');
        expect(response?.status()).toBe(200);
        await expect.poll(() => page.title()).toBe('Company API reference · Gatelink');
        await screenshot(page, 'api-reference', viewport);
        for (const action of ACTIONS) {
          await expect(page.locator(`#${action}-title`).textContent()).resolves.toContain(action);
          expect(await page.locator(`#${action} .api-call`).textContent()).toBe(
            `POST /api/company.php?a=${action}`,
          );
        }
        const ttl = page.locator('#request .api-field', { hasText: 'ttl_hours' });
        expect(await ttl.locator('.api-limits').textContent()).toBe('1..720 · default 24');
        const actor = page.locator('#open .api-field', { hasText: 'actor' }).first();
        expect(await actor.locator('.api-limits').textContent()).toBe('at most 128 characters');
        const offline = page.locator('#open .api-errors tr', { hasText: 'device_offline' });
        expect(await offline.locator('td').allTextContents()).toEqual([
          'device_offline',
          ERRORS.device_offline.message,
        ]);
        const group = page.locator('#open .api-errors tbody', { hasText: 'device_offline' });
        expect(await group.locator('th').textContent()).toBe('503 Service Unavailable');
        expect(await page.locator('#status .api-errors', { hasText: 'device_offline' }).count()).toBe(0);
        // The refusals every action can meet are listed once, after the actions.
        const badSecret = page.locator('#errors .api-errors tr', { hasText: 'bad_secret' });
        expect(await badSecret.locator('td').allTextContents()).toEqual([
          'bad_secret',
          ERRORS.bad_secret.message,
        ]);
        expect(await page.locator('#open .api-errors tr', { hasText: 'bad_secret' }).count()).toBe(0);
        expect(await page.locator('#authentication code', { hasText: 'X-Service-Sig' }).count()).toBe(1);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, 'the page is no wider than the window').toBeLessThanOrEqual(0);

        expect(await seriousAccessibilityViolations(page)).toEqual([]);
        expect(foreignRequests).toEqual([]);
        expect(errors).toEqual([]);
        await context.close();
      });
    }
  },
);
