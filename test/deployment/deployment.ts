import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startMailServer, type TestMailServer } from '../support/mail-server.js';
import { type IssuedCertificate, makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';
import { captureMissing } from './capture.js';
import { type ProvisionedController, provisionController, runController } from './controller-host.js';
import { createLab, type Host, type Lab, labMissing, type SpawnedProcess } from './network.js';
import { customerGrants, launchPhone, phoneMissing } from './phone-host.js';
import {
  type Caddy,
  type CloudSettings,
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
 * One deployment for a suite of test/deployment/: the lab's hosts (server, controller, phone), a mail server on
 * the tester's address, the broker's certificate from a CA of the suite's own, the server's stack, and a
 * provisioned controller daemon. Each suite makes its own and removes it in afterAll, whatever happened.
 */
export const SERVER_OCTET = 2;

export function deploymentMissing(): string | undefined {
  return labMissing() ?? serverMissing() ?? captureMissing() ?? phoneMissing();
}

/** What runs on the server host; a restore makes a second one on a fresh host at the same address. */
export interface ServerStack {
  readonly host: Host;
  readonly settings: CloudSettings;
  readonly postgres: Postgres;
  readonly caddy: Caddy;
  readonly cloud: SpawnedProcess;
  readonly site: SiteClient;
}

export interface Deployment {
  readonly lab: Lab;
  readonly work: string;
  readonly controllerHost: Host;
  readonly phoneHost: Host;
  readonly brokerCa: TestCa;
  readonly brokerCert: IssuedCertificate;
  readonly mail: TestMailServer;
  server: ServerStack;
  /**
   * Makes the server's stack on a fresh host: a new database, the data folder and Caddy's data given;
   * `restore` runs once the database is up, before the cloud starts.
   */
  startServer(options: {
    dataDir: string;
    caddyData: string;
    restore?: (host: Host, settings: CloudSettings) => Promise<unknown>;
  }): Promise<ServerStack>;
  /** Stops the server's processes and deletes its host, as a machine that is gone. */
  destroyServer(): Promise<void>;
  /** Provisions a controller over HTTPS and starts its daemon; resolves once the cloud shows it online. */
  startController(): Promise<{ controller: ProvisionedController; daemon: SpawnedProcess; trusted: string }>;
  launchPhone(): Promise<Browser>;
  remove(): Promise<void>;
}

export async function createDeployment(): Promise<Deployment> {
  const lab = await createLab();
  const work = mkdtempSync(join(tmpdir(), `glnet-${lab.id}-work-`));
  const running: { stop(): Promise<unknown> }[] = [];
  const cleanups: (() => unknown)[] = [() => rmSync(work, { recursive: true, force: true })];
  const stopAll = async () => {
    for (const part of running.splice(0).reverse()) await part.stop().catch(() => undefined);
  };
  try {
    const controllerHost = await lab.addHost('controller', 3);
    const phoneHost = await lab.addHost('phone', 4);
    const mail = await startMailServer(lab.testerAddress);
    running.push(mail);
    const brokerCa = await makeTestCa('Lab broker CA');
    cleanups.push(() => brokerCa.remove());
    const brokerCert = await brokerCa.issue([SERVER_NAME]);
    let serverParts: { stop(): Promise<unknown> }[] = [];

    const deployment: Deployment = {
      lab,
      work,
      controllerHost,
      phoneHost,
      brokerCa,
      brokerCert,
      mail,
      server: undefined as unknown as ServerStack,
      async startServer({ dataDir, caddyData, restore }) {
        const host = await lab.addHost('server', SERVER_OCTET);
        lab.name(SERVER_NAME, host.address);
        const postgres = await startPostgres(lab, host);
        serverParts = [postgres];
        const settings: CloudSettings = { databaseUrl: postgres.url, dataDir, smtpUrl: mail.url, brokerCert };
        mkdirSync(dataDir, { recursive: true });
        await restore?.(host, settings);
        const cloud = await startCloud(lab, host, settings);
        serverParts.push(cloud);
        const caddy = await startCaddy(lab, host, caddyData);
        serverParts.push(caddy);
        const site = siteClient({
          name: SERVER_NAME,
          address: host.address,
          ca: caddy.rootCert,
          operatorToken: operatorToken(dataDir),
        });
        deployment.server = { host, settings, postgres, caddy, cloud, site };
        return deployment.server;
      },
      async destroyServer() {
        for (const part of serverParts.splice(0).reverse()) await part.stop().catch(() => undefined);
        await lab.removeHost(deployment.server.host);
      },
      async startController() {
        const { site, caddy } = deployment.server;
        // What the controller trusts: Caddy's root for the provisioning call, the broker's CA for MQTT.
        const trusted = join(work, 'trusted.pem');
        writeFileSync(trusted, `${caddy.rootCert.trim()}\n${brokerCa.cert.trim()}\n`);
        const created = await site.ops('POST', '/ops/devices', { label: 'Lab gate' });
        const code = (created.body.device as { provisioning_code: string }).provisioning_code;
        const folder = join(work, 'controller');
        mkdirSync(folder, { recursive: true });
        const controller = await provisionController(lab, controllerHost, { folder, code, caFile: trusted });
        const daemon = runController(lab, controllerHost, controller.configFile);
        running.push(daemon);
        await waitFor(
          () => controllerOnline(deployment.server.site),
          'the controller to come online',
          30_000,
        ).catch((error: Error) => {
          throw new Error(`${error.message}; the controller wrote:\n${daemon.output()}`);
        });
        return { controller, daemon, trusted };
      },
      async launchPhone() {
        const browser = await launchPhone(phoneHost, {
          home: join(work, 'phone'),
          caFile: deployment.server.caddy.rootCertFile,
        });
        running.push({ stop: () => browser.close() });
        return browser;
      },
      async remove() {
        await stopAll();
        for (const part of serverParts.splice(0).reverse()) await part.stop().catch(() => undefined);
        await lab.remove();
        for (const cleanup of cleanups) cleanup();
      },
    };
    return deployment;
  } catch (error) {
    await stopAll();
    await lab.remove();
    for (const cleanup of cleanups) cleanup();
    throw error;
  }
}

/** Whether the cloud's only controller shows online to its operators. */
export async function controllerOnline(site: SiteClient): Promise<boolean> {
  const devices = (await site.ops('GET', '/ops/devices')).body.devices as { online: boolean }[] | undefined;
  return devices?.[0]?.online === true;
}

/** An approved company without a domain, with a fresh secret, made through the operator API. */
export async function approvedSecretCompany(
  site: SiteClient,
  name: string,
): Promise<{ org_id: number; secret: string }> {
  const created = await site.ops('POST', '/ops/companies', { name });
  const id = (created.body.company as { id: number }).id;
  await site.ops('POST', `/ops/companies/${id}/approve`);
  const issued = await site.ops('POST', `/ops/companies/${id}/secret`);
  return { org_id: id, secret: issued.body.secret as string };
}

/**
 * The whole path to a key: the company asks, the customer signs up with a passkey on the phone, pairs the
 * controller and grants its gate. Returns the company's credentials and the key's reference.
 */
export async function grantOnThePhone(
  site: SiteClient,
  browser: Browser,
  controller: ProvisionedController,
): Promise<{ company: { org_id: number; secret: string }; keyRef: number; requestUrl: string }> {
  const company = await approvedSecretCompany(site, 'Lab Couriers');
  const requested = await site.call('request', { ...company, ttl_hours: 24 });
  if (requested.status !== 200) throw new Error(`request: ${JSON.stringify(requested.body)}`);
  const code = requested.body.code as string;
  const requestUrl = requested.body.url as string;
  const state = async () => (await site.call('status', { ...company, code })).body;
  await customerGrants(
    browser,
    { requestUrl, code, pairingCode: controller.pairingCode, customer: 'Lena Lab', barrier: 'Lab yard' },
    async () => (await state()).state === 'issued',
  );
  return { company, keyRef: (await state()).key_ref as number, requestUrl };
}

/** A copy of a folder, as a backup keeps one. */
export function copyFolder(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}
