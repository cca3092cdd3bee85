import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import {
  addVirtualAuthenticator,
  chromiumMissing,
  launchChromium,
  newProfile,
  shootBothSizes,
  VIEWPORTS,
} from '../support/browser.js';
import { type Signer, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * The customer's whole story in real Chromium (issue 13, docs/design.md section 10): a company's signed
 * `request`; the customer opens its link, signs up with a passkey, pairs a real controller runtime, and grants
 * two of its three objects until a date; the company's `status` shows `issued` with those `numbers`; the
 * company opens and the controller performs it; the journal shows the line with actor and company, and the CSV
 * export holds it; the customer withdraws, and the next `open` is refused with 403 `revoked` and shown in the
 * journal. Every page is saved at a phone's and a desktop's size under test/artifacts/ and checked with axe.
 */
const OBJECTS_YAML = `
objects:
  - id: front
    label: Front gate
    kind: simulated
    pulse_ms: 0
  - id: side
    label: Side gate
    kind: simulated
    pulse_ms: 0
  - id: garage
    label: Garage door
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;
const DOMAIN = 'parcels.example';
const ACTOR = 'Anna Nowak, van 7';

describe.skipIf(chromiumMissing)('a customer grants, watches and withdraws access', () => {
  let keyFiles: KeyFileServer;
  let database: TestDatabase;
  let cloud: TestCloud;
  let dir: string;
  let controller: Controller;
  let driver: SimulatedDriver;
  let pairingCode: string;
  let numbers: Record<'front' | 'side' | 'garage', number>;
  let company: { id: number; signer: Signer };
  let browser: Browser;
  let phone: { context: BrowserContext; page: Page; foreignRequests: string[] };
  let desktop: BrowserContext;
  const shot = pageShooter();

  beforeAll(async () => {
    keyFiles = new KeyFileServer();
    await keyFiles.start();
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
    company = await signatureCompany(cloud, keyFiles, DOMAIN);
    dir = await mkdtemp(join(tmpdir(), 'gatelink-story-'));
    const created = await cloud.ops('POST', '/ops/devices', { label: 'Installed by Gatelink' });
    const device = created.body.device as { provisioning_code: string };
    await writeFile(join(dir, 'objects.yaml'), OBJECTS_YAML);
    const provisioned = await provision({
      cloud: cloud.baseUrl,
      code: device.provisioning_code,
      configPath: join(dir, 'device.yaml'),
      objectsFrom: join(dir, 'objects.yaml'),
    });
    pairingCode = provisioned.response.pairing_code!;
    const numberOf = (id: string) => provisioned.response.numbers.find((n) => n.id === id)!.number_id;
    numbers = { front: numberOf('front'), side: numberOf('side'), garage: numberOf('garage') };
    const config = loadConfig(join(dir, 'device.yaml'));
    driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    controller = new Controller(config, {
      drivers: { simulated: driver },
      reconnectMinMs: 50,
      log: () => {},
    });
    await controller.start();
    browser = await launchChromium();
    phone = await newProfile(browser, cloud.baseUrl, 'phone');
    phone.page.on('dialog', (dialog) => void dialog.accept());
    await addVirtualAuthenticator(phone.page);
    desktop = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: cloud.baseUrl });
  });

  afterAll(async () => {
    await browser?.close();
    await controller?.stop();
    await cloud?.stop();
    await database?.close();
    await keyFiles?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function pageShooter() {
    return (name: string) => shootBothSizes(phone, desktop, name);
  }

  const companyCall = (action: string, body: unknown) => cloud.signedCall(action, body, company.signer);

  it('tells the whole story', async () => {
    const { page } = phone;
    // The company asks; the customer opens the link it shows as a QR code.
    const requested = await companyCall('request', { ref: 'ORDER-1042', ttl_hours: 48 });
    expect(requested.status).toBe(200);
    const code = requested.body.code as string;
    await page.goto(requested.body.url as string);
    await expect.poll(() => page.locator('main').innerText()).toContain(DOMAIN);
    await shot('story-01-request-signed-out');
    expect((await companyCall('status', { code })).body.state).toBe('new');

    // Sign up with a passkey, and come back to the request.
    await page.locator('a[href^="/signup"]').first().click();
    await page.locator('input[name="display_name"]').fill('Eva Kowalska');
    await shot('story-02-sign-up');
    await page.locator('button[data-passkey]').click();
    await page.waitForURL((url) => url.pathname === `/c/${code}`);
    await shot('story-03-request-signed-in');
    expect((await companyCall('status', { code })).body.state).toBe('new');

    // Continue: the request is claimed, and consent asks for a barrier first.
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(async () => (await companyCall('status', { code })).body.state).toBe('claimed');
    await shot('story-04-consent-without-barrier');
    await page.locator('a[href^="/barriers?next="]').first().click();
    await page.locator('input[name="code"]').fill(pairingCode.toLowerCase());
    await page.locator('input[name="name"]').fill('Home, Lipowa 5');
    await shot('story-05-add-barrier');
    await page.getByRole('button', { name: 'Add barrier' }).click();
    await page.waitForURL((url) => url.pathname === `/c/${code}`);

    // Grant two of the three objects until a date.
    await page.getByLabel('Front gate').check();
    await page.getByLabel('Side gate').check();
    await page.locator('input[name="lifetime"][value="date"]').check();
    await page.locator('input[name="until"]').fill('2030-12-31');
    await shot('story-06-consent');
    await page.getByRole('button', { name: 'Grant access' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Front gate');
    await shot('story-07-granted');
    const status = (await companyCall('status', { code })).body;
    expect(status.state).toBe('issued');
    expect(status.numbers).toEqual([
      { number_id: numbers.front, label: 'Front gate' },
      { number_id: numbers.side, label: 'Side gate' },
    ]);
    // The last day of access is the whole of 31 December (docs/design.md section 10.3).
    expect(status.key_expires_at).toBe('2031-01-01 00:00:00');
    const keyRef = status.key_ref as number;

    // The company opens; the real controller runtime performs it.
    const opened = await companyCall('open', { key_ref: keyRef, number_id: numbers.front, actor: ACTOR });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body.ok).toBe(1);

    // The barrier page lists the company; the journal shows the opening with actor and company.
    await page.goto('/barriers');
    await shot('story-08-barriers');
    await page.getByRole('link', { name: 'Home, Lipowa 5' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain(DOMAIN);
    await shot('story-09-barrier');
    await page.locator('a[href$="/journal"]').first().click();
    await expect.poll(() => page.locator('main').innerText()).toContain(ACTOR);
    expect(await page.locator('main').innerText()).toContain('Front gate');
    await shot('story-10-journal');

    // The CSV export holds the same line.
    const csvUrl = await page.locator('a[href*="/journal.csv"]').first().getAttribute('href');
    const csv = await phone.context.request.get(csvUrl!);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toContain('text/csv');
    expect(await csv.text()).toContain(ACTOR);

    // Withdraw: the company's status says revoked, and the next open is refused and journalled.
    await page.goto('/barriers');
    await page.getByRole('link', { name: 'Home, Lipowa 5' }).click();
    await page
      .getByRole('button', { name: /Withdraw access/ })
      .first()
      .click();
    await expect.poll(async () => (await companyCall('status', { code })).body.state).toBe('revoked');
    await shot('story-11-withdrawn');
    const refused = await companyCall('open', { key_ref: keyRef, number_id: numbers.front, actor: ACTOR });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('revoked');
    await page.locator('a[href$="/journal"]').first().click();
    const journal = await page.locator('main').innerText();
    expect(journal).toMatch(/withdrawn/i);
    await shot('story-12-journal-after-withdrawal');

    // One opening reached the gate, and no page asked another host for anything.
    expect(driver.pulses.get('front')).toBe(1);
    expect(driver.pulses.get('side') ?? 0).toBe(0);
    expect(phone.foreignRequests).toEqual([]);
  }, 180_000);
});
