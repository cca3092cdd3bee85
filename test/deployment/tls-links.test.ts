import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServer, type TestMailServer } from '../support/mail-server.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';
import { type Capture, captureMissing, readCapture, startCapture } from './capture.js';
import {
  openingsLogged,
  type ProvisionedController,
  provisionController,
  runController,
} from './controller-host.js';
import { createLab, type Host, type Lab, labMissing, type SpawnedProcess } from './network.js';
import { customerGrants, launchPhone, phoneMissing } from './phone-host.js';
import {
  type Caddy,
  features,
  operatorToken,
  type Postgres,
  SERVER_NAME,
  serverMissing,
  startCaddy,
  startCloud,
  startPostgres,
} from './server-host.js';
import { type SiteClient, siteClient } from './site-client.js';

/**
 * A deployment as an operator makes one (issue "Production: TLS on every link"), on hosts made of network
 * namespaces: a server with PostgreSQL, Caddy (`tls internal`) and the compiled cloud in production, a
 * controller provisioned over HTTPS that trusts only its CA file, and a phone running Chromium that trusts
 * Caddy's root. A customer signs up with a passkey, pairs the controller and grants a company, which opens;
 * a capture on the controller's link shows that nothing of MQTT travels in clear.
 */
const missing = labMissing() ?? serverMissing() ?? captureMissing() ?? phoneMissing();

describe.skipIf(missing)('a deployment with TLS on every link', () => {
  let lab: Lab;
  let work: string;
  let server: Host;
  let controllerHost: Host;
  let mail: TestMailServer;
  let ca: TestCa;
  let postgres: Postgres;
  let caddy: Caddy;
  let cloud: SpawnedProcess;
  let site: SiteClient;
  let capture: Capture;
  let controller: ProvisionedController;
  let daemon: SpawnedProcess;
  let browser: Browser;

  beforeAll(async () => {
    lab = await createLab();
    work = mkdtempSync(join(tmpdir(), `glnet-${lab.id}-work-`));
    server = await lab.addHost('server', 2);
    controllerHost = await lab.addHost('controller', 3);
    const phoneHost = await lab.addHost('phone', 4);
    lab.name(SERVER_NAME, server.address);
    mail = await startMailServer(lab.testerAddress);
    ca = await makeTestCa('Lab broker CA');
    const brokerCert = await ca.issue([SERVER_NAME]);
    postgres = await startPostgres(lab, server);
    const dataDir = join(work, 'cloud-data');
    cloud = await startCloud(lab, server, {
      databaseUrl: postgres.url,
      dataDir,
      smtpUrl: mail.url,
      brokerCert,
    });
    caddy = await startCaddy(lab, server, join(work, 'caddy'));
    site = siteClient({
      name: SERVER_NAME,
      address: server.address,
      ca: caddy.rootCert,
      operatorToken: operatorToken(dataDir),
    });
    // What the controller trusts: Caddy's root for the provisioning call, the broker's CA for MQTT.
    const bundle = join(work, 'trusted.pem');
    writeFileSync(bundle, `${caddy.rootCert.trim()}\n${ca.cert.trim()}\n`);
    capture = await startCapture(lab, controllerHost, {
      peer: server.address,
      file: join(work, 'controller.pcap'),
    });
    const created = await site.ops('POST', '/ops/devices', { label: 'Lab gate' });
    const code = (created.body.device as { provisioning_code: string }).provisioning_code;
    const folder = join(work, 'controller');
    mkdirSync(folder);
    controller = await provisionController(lab, controllerHost, { folder, code, caFile: bundle });
    daemon = runController(lab, controllerHost, controller.configFile, bundle);
    await waitFor(
      async () =>
        ((await site.ops('GET', '/ops/devices')).body.devices as { online: boolean }[])[0]?.online === true,
      'the controller to come online',
      30_000,
    );
    browser = await launchPhone(phoneHost, { home: join(work, 'phone'), caFile: caddy.rootCertFile });
  }, 110_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await daemon?.stop();
    await cloud?.stop();
    await caddy?.stop();
    await postgres?.stop();
    await mail?.stop();
    ca?.remove();
    await lab?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('lets a customer sign up with a passkey, pair and grant on the phone, and a company open', async () => {
    const company = await approvedSecretCompany(site, 'Lab Couriers');
    const requested = await site.call('request', { ...company, ttl_hours: 24 });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const code = requested.body.code as string;
    expect(requested.body.url).toBe(`https://${SERVER_NAME}/c/${code}`);
    await customerGrants(
      browser,
      {
        requestUrl: requested.body.url as string,
        code,
        pairingCode: controller.pairingCode,
        customer: 'Lena Lab',
        barrier: 'Lab yard',
      },
      async () => (await site.call('status', { ...company, code })).body.state === 'issued',
    );
    const status = (await site.call('status', { ...company, code })).body;
    const opened = await site.call('open', {
      ...company,
      key_ref: status.key_ref,
      number_id: controller.gateNumberId,
      actor: 'Driver 7',
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toMatchObject({ ok: 1 });
    await waitFor(() => openingsLogged(daemon) === 1, 'the controller to log the opening');
    const journal = await site.ops('GET', `/ops/journal?company=${company.org_id}`);
    expect(JSON.stringify(journal.body.entries)).toContain('Driver 7');
  }, 90_000);

  describe('the capture on the controller’s link', () => {
    it.runIf(features.brokerTls)(
      'holds no MQTT in clear and no password bytes: every byte is TLS',
      async () => {
        await capture.stop();
        const reading = await readCapture(capture.file);
        expect(reading.brokerTlsFrames).toBeGreaterThan(0);
        expect(reading.clearConnects).toEqual([]);
        expect(reading.holds(controller.password)).toBe(false);
        expect(reading.holds(controller.commandKey)).toBe(false);
        expect(reading.nonTlsPorts).toEqual([]);
      },
    );

    // Until the broker has its TLS listener, the capture shows what TLS is to hide: the reading sees it.
    it.runIf(!features.brokerTls)('sees the CONNECT and the password on the plain listener', async () => {
      await capture.stop();
      const reading = await readCapture(capture.file);
      expect(reading.clearConnects).toContain(controller.username);
      expect(reading.holds(controller.password)).toBe(true);
      expect(reading.nonTlsPorts).toContain('1884');
    });
  });
});

async function approvedSecretCompany(
  site: SiteClient,
  name: string,
): Promise<{ org_id: number; secret: string }> {
  const created = await site.ops('POST', '/ops/companies', { name });
  const id = (created.body.company as { id: number }).id;
  await site.ops('POST', `/ops/companies/${id}/approve`);
  const issued = await site.ops('POST', `/ops/companies/${id}/secret`);
  return { org_id: id, secret: issued.body.secret as string };
}
