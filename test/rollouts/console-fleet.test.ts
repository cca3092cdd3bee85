import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { apiController, injectRelease, signedRelease } from '../support/releases.js';

/**
 * The console's Controllers and Rollouts pages (docs/design.md section 12.4.2): the fleet with version, arch,
 * last report and update state, and each rollout's counts with pause and resume, behind the console's sign-in
 * and CSRF like its other pages.
 */
const releaseKey = SigningKey.generate();
let database: TestDatabase;
let cloud: TestCloud;
let releases = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 } });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function tokenConsole(): Promise<BrowserClient> {
  const client = new BrowserClient(cloud.app);
  client.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
  return client;
}

/** A provisioned arm64 controller on version 1.0.0 and a running rollout of a 2.0.x to it. */
async function rolloutToController(): Promise<{ deviceId: string; rolloutId: number }> {
  const deviceId = await apiController(cloud, { label: 'Orchard gate' });
  const bytes = randomBytes(64);
  const releaseId = await injectRelease(
    cloud,
    bytes,
    signedRelease(releaseKey, bytes, { version: `2.0.${releases++}` }),
  );
  const started = await cloud.ops('POST', '/ops/rollouts', {
    release_id: releaseId,
    target: { devices: [deviceId] },
  });
  return { deviceId, rolloutId: (started.body.rollout as { id: number }).id };
}

describe('the fleet in the console', () => {
  it('lists controllers with version, arch and update state, linked from the navigation', async () => {
    const { deviceId, rolloutId } = await rolloutToController();
    const client = await tokenConsole();
    const home = await client.get('/console');
    expect(home.html).toContain('href="/console/controllers"');
    expect(home.html).toContain('href="/console/rollouts"');
    const page = await client.get('/console/controllers');
    expect(page.status).toBe(200);
    const text = visibleText(page.html);
    expect(text).toContain(deviceId);
    expect(text).toContain('offline · 1.0.0 · arm64 · last seen never');
    expect(text).toContain(`Rollout ${rolloutId}: pending`);
  });

  it('shows rollouts with their counts, and pauses and resumes one through its form', async () => {
    const { rolloutId } = await rolloutToController();
    const client = await tokenConsole();
    const page = await client.get('/console/rollouts');
    expect(visibleText(page.html)).toContain(`Rollout ${rolloutId}: 2.0.1 (arm64), running`);
    expect(visibleText(page.html)).toContain('1 targeted · pending 1');

    const forged = await client.post(`/console/rollouts/${rolloutId}/pause`, { _csrf: 'forged' });
    expect(forged.status).toBe(403);

    const paused = await client.post(`/console/rollouts/${rolloutId}/pause`);
    expect(paused.status).toBe(303);
    const after = await client.get('/console/rollouts');
    expect(visibleText(after.html)).toContain(`Rollout ${rolloutId}: 2.0.1 (arm64), paused`);
    expect(after.html).toContain(`/console/rollouts/${rolloutId}/resume`);
    await client.post(`/console/rollouts/${rolloutId}/resume`);
    expect(visibleText((await client.get('/console/rollouts')).html)).toContain(
      `Rollout ${rolloutId}: 2.0.1 (arm64), running`,
    );
  });

  it('refuses a browser without a console session', async () => {
    const stranger = new BrowserClient(cloud.app);
    expect((await stranger.get('/console/controllers')).status).toBe(403);
    expect((await stranger.get('/console/rollouts')).status).toBe(403);
  });
});
