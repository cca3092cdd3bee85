import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Replacing a controller and removing a barrier as a person does it in Chromium (docs/design.md section 9.1):
 * the forms pass axe, each asks first, and the page after says what happened.
 */
describe.skipIf(chromiumMissing)(
  'replacing and removing a barrier in Chromium',
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

    async function signIn(context: BrowserContext, customerId: number): Promise<void> {
      const value = await startSession(cloud.ctx, customerId);
      await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
    }

    async function newControllerCode(): Promise<{ deviceId: string; pairingCode: string }> {
      const added = await cloud.ops('POST', '/ops/devices', { label: 'Spare' });
      const { device_id, provisioning_code } = added.body.device as {
        device_id: string;
        provisioning_code: string;
      };
      const response = await cloud.app.inject({
        method: 'POST',
        url: '/api/device/provision',
        payload: {
          code: provisioning_code,
          public_key: SigningKey.generate().publicKey.base64,
          objects: [{ id: 'relay-1', label: 'Main gate', kind: 'relay' }],
          version: '0.1.0',
        },
      });
      return { deviceId: device_id, pairingCode: (response.json() as { pairing_code: string }).pairing_code };
    }

    /** Accepts the next confirmation and remembers its question. */
    function answerYes(page: Page, asked: string[]): void {
      page.once('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
    }

    it('replaces the controller with its code, then removes the barrier', async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, 'phone');
      const customer = await signedInCustomer(cloud, 'Chromium owner');
      const barrier = await insertBarrier(cloud, customer.id, { name: 'Front gate', online: true });
      const spare = await newControllerCode();
      await signIn(context, customer.id);

      await page.goto(`/barriers/${barrier.deviceId}`);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'barrier-lifecycle-forms', 'phone');
      await page.getByLabel('The new controller’s pairing code').fill('WRONG-CODE');
      const asked: string[] = [];
      answerYes(page, asked);
      await page.getByRole('button', { name: 'Replace the controller' }).click();
      await page.getByText('A pairing code has 8 letters and digits').first().waitFor();

      await page.getByLabel('The new controller’s pairing code').fill(spare.pairingCode.toLowerCase());
      answerYes(page, asked);
      await page.getByRole('button', { name: 'Replace the controller' }).click();
      await page.getByText('Controller replaced').waitFor();
      expect(new URL(page.url()).pathname).toBe(`/barriers/${spare.deviceId}`);

      answerYes(page, asked);
      await page.getByRole('button', { name: 'Remove this barrier from your account' }).click();
      await page.getByText('Barrier removed from your account').waitFor();
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'barrier-removed', 'phone');
      expect(asked).toEqual([
        'Move Front gate to the new controller? The old one stops working for good.',
        'Move Front gate to the new controller? The old one stops working for good.',
        'Remove Front gate from your account? Every company’s access to it ends.',
      ]);
      expect(await page.getByRole('link', { name: 'Front gate' }).count()).toBe(0);
      expect(foreignRequests).toEqual([]);
      await context.close();
    });
  },
);
