import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import type { ResolvedAddress } from '../../cloud/links/outbound-http/safe-connection.js';
import { issueSandboxSecret } from '../../cloud/rules/call-auth/secret.js';
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
import { companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The sandbox page in real Chromium at a phone's and a desktop's size (docs/design.md section 11.9): a developer
 * of a company still waiting for approval grants a sandbox request as the simulated customer, makes the barrier
 * stick and withdraws the key, each move seen by the API, then opens the sandbox's callback and events pages
 * and adds the sandbox an endpoint; each step passes axe and leaves a screenshot.
 */
const resolveHost = async (): Promise<ResolvedAddress[]> => [{ address: '93.184.215.14', family: 4 }];

describe.skipIf(chromiumMissing)(
  'the sandbox page in Chromium',
  { timeout: BROWSER_STORY_TIMEOUT_MS },
  () => {
    let database: TestDatabase;
    let cloud: TestCloud;
    let browser: Browser;

    beforeAll(async () => {
      database = await createTestDatabase();
      cloud = await startTestCloud({ database, resolveHost });
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await cloud?.stop();
      await database?.close();
    });

    async function look(page: Page, name: string, viewport: ViewportName): Promise<void> {
      await expect.poll(() => page.title()).toContain('Sandbox');
      expect(await seriousAccessibilityViolations(page), name).toEqual([]);
      await screenshot(page, name, viewport);
    }

    async function signIn(context: BrowserContext, customerId: number): Promise<void> {
      const value = await startSession(cloud.ctx, customerId);
      await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
    }

    for (const viewport of ['phone', 'desktop'] as const) {
      it(`at ${viewport} size: grants as the simulated customer, makes the gate stick, and withdraws`, async () => {
        const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
        const owner = await companyOwner(cloud, { name: `Trying Couriers ${viewport}` });
        await signIn(context, owner.customerId);
        await page.goto(`/company/${owner.companyId}/sandbox`);
        await look(page, 'sandbox-before', viewport);
        expect(await page.locator('main').innerText()).toContain('Your sandbox is made with your first call');

        const { secret } = await issueSandboxSecret(cloud.ctx, owner.companyId);
        const auth = { org_id: owner.companyId, secret, sandbox: true };
        const asked = await cloud.call('request', { ...auth, ref: 'TRY-7' });
        const code = asked.body.code as string;
        await page.reload();
        await page.getByRole('button', { name: `Grant ${code}` }).click();
        await page.getByText('Granted: the key is in status').waitFor();
        const status = await cloud.call('status', { ...auth, code });
        expect(status.body).toMatchObject({ sandbox: true, state: 'issued' });
        const keyRef = status.body.key_ref as number;
        const numberId = (status.body.numbers as { number_id: number }[])[0]!.number_id;

        await page.getByLabel('Stuck: the relay fires and the gate never moves').check();
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByText('Saved: the next openings come to what you chose.').waitFor();
        const open = () =>
          cloud.call('open', { ...auth, key_ref: keyRef, number_id: numberId, actor: 'Dana' });
        expect((await open()).body).toMatchObject({ sandbox: true, ok: 1 });
        await page.reload();
        expect(await page.locator('main').innerText()).toContain('Dana');
        await look(page, 'sandbox-granted', viewport);

        await page.getByRole('button', { name: `Withdraw key ${keyRef}` }).click();
        await page.getByText('Withdrawn: the next open with that key answers revoked.').waitFor();
        expect((await open()).body.error).toBe('revoked');
        await look(page, 'sandbox-withdrawn', viewport);

        // The sandbox's own endpoints and events: the live pages' forms, framed under Sandbox.
        await page.getByRole('link', { name: 'Add a callback endpoint for the sandbox' }).click();
        await look(page, 'sandbox-callback', viewport);
        expect(await page.getByRole('textbox', { name: 'Callback address' }).inputValue()).toBe('');
        await page.getByRole('link', { name: 'sandbox', exact: true }).click();
        await page.getByRole('link', { name: 'Sandbox events and deliveries' }).click();
        await look(page, 'sandbox-events', viewport);
        expect(await page.locator('main').innerText()).toContain('No endpoint');
        await page.getByRole('link', { name: 'Add an endpoint' }).click();
        await page.getByLabel('Callback address').fill('https://staging.example.com/hooks/sandbox');
        // Its events so far (the grant's, the withdrawal's) are held until a first endpoint: it asks.
        await page.getByLabel(/^Drop them/).check();
        await page.getByRole('button', { name: 'Add the endpoint' }).click();
        await page.getByText('Endpoint added. The events that were waiting are dropped').waitFor();
        await look(page, 'sandbox-endpoint', viewport);
        expect(await page.getByRole('textbox', { name: 'Signing secret', exact: true }).inputValue()).toMatch(
          /^whsec_/,
        );
        await page
          .getByRole('navigation', { name: 'Company' })
          .getByRole('link', { name: 'Sandbox' })
          .click();
        await page.getByText('and go to its endpoint:').waitFor();
        expect(await page.locator('main').innerText()).toContain('https://staging.example.com/hooks/sandbox');
        await look(page, 'sandbox-with-endpoint', viewport);
        expect(foreignRequests).toEqual([]);
        await context.close();
      });
    }
  },
);
