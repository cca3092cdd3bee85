import { randomBytes } from 'node:crypto';
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
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { apiController, injectRelease, signedRelease } from '../support/releases.js';

/**
 * The console's fleet pages in real Chromium (docs/design.md section 12.4.2): the controllers with their
 * version, arch, last report and a roll-back with its reason, and a rollout paused and resumed with its
 * buttons. Every page is checked with axe and saved at a phone's and a desktop's size under test/artifacts/.
 */
const releaseKey = SigningKey.generate();

describe.skipIf(chromiumMissing)('an operator watches the fleet in the console', () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let phone: { context: BrowserContext; page: Page; foreignRequests: string[] };
  let desktop: BrowserContext;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 } });
    browser = await launchChromium();
    phone = await newProfile(browser, cloud.baseUrl, 'phone');
    desktop = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
  });

  async function controller(label: string): Promise<string> {
    const deviceId = await apiController(cloud, { label, version: '1.4.0' });
    await cloud.ctx.db
      .updateTable('devices')
      .set({ online: true, state_at: cloud.ctx.clock.now() })
      .where('id', '=', deviceId)
      .execute();
    return deviceId;
  }

  async function rollout(devices: string[]): Promise<number> {
    const bytes = randomBytes(256);
    const releaseId = await injectRelease(
      cloud,
      bytes,
      signedRelease(releaseKey, bytes, { version: '1.5.0' }),
    );
    const started = await cloud.ops('POST', '/ops/rollouts', { release_id: releaseId, target: { devices } });
    return (started.body.rollout as { id: number }).id;
  }

  it('shows each controller’s release and update, and pauses and resumes a rollout', async () => {
    const orchard = await controller('Orchard gate');
    const yard = await controller('Builders’ yard barrier, north entrance by the container park');
    const id = await rollout([orchard, yard]);
    await cloud.ctx.db
      .updateTable('device_updates')
      .set({ state: 'rolled_back', reason: 'crashed', detail: 'exited 3 times before it was healthy' })
      .where('rollout_id', '=', id)
      .where('device_id', '=', yard)
      .execute();

    const { page } = phone;
    await page.goto('/console/signin');
    await page.getByLabel('Operator token').fill(cloud.operatorToken);
    await page.getByRole('button', { name: 'Sign in to the console' }).click();
    await page.waitForURL((url) => url.pathname === '/console');

    await page.getByRole('link', { name: 'Controllers' }).click();
    await page.waitForURL((url) => url.pathname === '/console/controllers');
    const fleet = await page.locator('main').innerText();
    expect(fleet).toContain('online · 1.4.0 · arm64');
    expect(fleet).toContain(`Rollout ${id}: rolled back (crashed): exited 3 times before it was healthy`);
    expect(fleet).not.toContain('last seen never');
    await shootBothSizes(phone, desktop, 'console-fleet-01-controllers');

    await page.getByRole('link', { name: 'Rollouts' }).click();
    await page.waitForURL((url) => url.pathname === '/console/rollouts');
    expect(await page.locator('main').innerText()).toContain(`Rollout ${id}: 1.5.0 (arm64), running`);
    await shootBothSizes(phone, desktop, 'console-fleet-02-rollouts');

    await page.getByRole('button', { name: `Pause rollout ${id}` }).click();
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain(`Rollout ${id}: 1.5.0 (arm64), paused`);
    await shootBothSizes(phone, desktop, 'console-fleet-03-paused');
    await page.getByRole('button', { name: `Resume rollout ${id}` }).click();
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain(`Rollout ${id}: 1.5.0 (arm64), running`);
    expect(phone.foreignRequests).toEqual([]);
  }, 120_000);
});
