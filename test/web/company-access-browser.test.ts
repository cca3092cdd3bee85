import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { getCompany } from '../../cloud/rules/companies/companies.js';
import { reconfirmDomainKeys } from '../../cloud/rules/domain-keys/confirm.js';
import { pinDomainKey } from '../../cloud/rules/domain-keys/pin.js';
import { proveText } from '../../company/prove.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * The API access page in real Chromium at a phone's and a desktop's size (docs/design.md section 11.2), for a
 * domain company (check, proof, the rotation notice) and a secret company (issue, rotate): each step passes
 * axe, reaches no other host and leaves a screenshot under test/artifacts/.
 */
describe.skipIf(chromiumMissing)('API access in Chromium', { timeout: BROWSER_STORY_TIMEOUT_MS }, () => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const keyFiles = new KeyFileServer();
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    await keyFiles.start();
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
    await keyFiles.stop();
  });

  async function look(page: Page, name: string, viewport: ViewportName): Promise<void> {
    await expect.poll(() => page.title()).toContain('API access');
    expect(await seriousAccessibilityViolations(page), name).toEqual([]);
    await screenshot(page, name, viewport);
  }

  async function signIn(context: BrowserContext, customerId: number): Promise<void> {
    const value = await startSession(cloud.ctx, customerId);
    await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
  }

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`at ${viewport} size: a domain company checks its key, proves it, and sees a new key to confirm`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const domain = `courier-${viewport}.example`;
      const owner = await companyOwner(cloud, { name: 'Courier & Sons', domain });
      await signIn(context, owner.customerId);
      await page.goto(`/company/${owner.companyId}/access`);
      await look(page, 'access-domain-new', viewport);

      const key = SigningKey.generate();
      keyFiles.publish(domain, key.publicKey.base64);
      await page.getByRole('button', { name: 'Check my key file' }).click();
      await page.getByText('Key file checked').waitFor();
      await look(page, 'access-domain-checked', viewport);

      await page.getByRole('button', { name: 'Send the proof' }).click();
      await page.getByText('There is a problem').waitFor();
      await look(page, 'access-domain-proof-error', viewport);
      const challenge = (await page.locator('pre', { hasText: /^gatelink-key-proof:/ }).textContent())!;
      await page.getByLabel('Signature').fill(proveText(key, challenge));
      await page.getByRole('button', { name: 'Send the proof' }).click();
      await page.getByText('Proof accepted').waitFor();
      await look(page, 'access-domain-proven', viewport);

      const company = await getCompany(cloud.ctx, owner.companyId);
      await pinDomainKey(
        cloud.ctx,
        company,
        { status: 'approved', approved_at: clock.now() },
        company.key_proven!,
      );
      keyFiles.publish(domain, SigningKey.generate().publicKey.base64);
      clock.advance(3600 * 1000);
      await reconfirmDomainKeys(cloud.ctx);
      await page.goto(`/company/${owner.companyId}/access`);
      await page.getByText('Your domain now publishes another key').waitFor();
      await page.getByRole('button', { name: 'Check my key file' }).click();
      await page.getByRole('button', { name: 'Confirm the new key' }).waitFor();
      await look(page, 'access-domain-rotation', viewport);

      expect(foreignRequests).toEqual([]);
      await context.close();
    });

    it(`at ${viewport} size: a secret company issues and rotates its secret`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const owner = await companyOwner(cloud, { name: 'Night Deliveries' });
      await signIn(context, owner.customerId);
      await page.goto(`/company/${owner.companyId}/access`);
      await look(page, 'access-secret-pending', viewport);

      await approveDirectly(cloud, owner.companyId);
      await page.reload();
      await page.getByRole('button', { name: 'Issue a secret' }).click();
      await page.getByText('Your new secret').waitFor();
      await look(page, 'access-secret-issued', viewport);

      const asked: string[] = [];
      page.on('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      await page.getByText('Retiring').waitFor();
      await look(page, 'access-secret-rotated', viewport);

      await page.getByRole('button', { name: 'Expire it now' }).click();
      await page.getByText('The old secret no longer works').waitFor();
      await look(page, 'access-secret-expired', viewport);
      expect(asked).toEqual([
        'Rotate the secret? The new one is shown once; the current one keeps working for 24 hours.',
        expect.stringMatching(
          /^End the old secret ….{4} now\? Calls still using it are refused from then on\.$/,
        ),
      ]);

      expect(foreignRequests).toEqual([]);
      await context.close();
    });

    it(`at ${viewport} size: a company waiting for approval makes a sandbox secret and calls its sandbox`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      const owner = await companyOwner(cloud, { name: 'Early Couriers' });
      await signIn(context, owner.customerId);
      await page.goto(`/company/${owner.companyId}/access`);
      await page.getByRole('button', { name: 'Make a sandbox secret' }).click();
      await page.getByText('Your new sandbox secret').waitFor();
      await look(page, 'access-sandbox-secret', viewport);
      const secret = (await page.getByLabel('Sandbox secret', { exact: true }).inputValue()).trim();
      expect(secret).toMatch(/^glsb_/);

      const sandbox = { org_id: owner.companyId, secret, sandbox: true };
      const asked = await cloud.call('request', sandbox);
      expect(asked.body).toMatchObject({ sandbox: true });
      expect((await cloud.call('request', { org_id: owner.companyId, secret })).body.error).toBe(
        'sandbox_secret',
      );

      const confirmations: string[] = [];
      page.on('dialog', (dialog) => {
        confirmations.push(dialog.message());
        void dialog.accept();
      });
      await page.goto(`/company/${owner.companyId}/access`);
      await page.getByRole('button', { name: 'Make a new sandbox secret' }).click();
      await page.getByText('Your new sandbox secret').waitFor();
      expect(confirmations).toEqual(['Make a new sandbox secret? The current one stops working at once.']);
      expect((await cloud.call('request', sandbox)).body.error).toBe('bad_secret');
      expect(foreignRequests).toEqual([]);
      await context.close();
    });
  }
});
