import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { type Capture, readCapture, startCapture } from './capture.js';
import { openingsLogged, type ProvisionedController } from './controller-host.js';
import { createDeployment, type Deployment, deploymentMissing, grantOnThePhone } from './deployment.js';
import type { SpawnedProcess } from './network.js';
import { MQTT_TLS_PORT, SERVER_NAME } from './server-host.js';

/**
 * A deployment as an operator makes one (issue "Production: TLS on every link"), on hosts made of network
 * namespaces: a server with PostgreSQL, Caddy (`tls internal`) and the compiled cloud in production, a
 * controller provisioned over HTTPS that trusts only its CA file, and a phone running Chromium that trusts
 * Caddy's root. A customer signs up with a passkey, pairs the controller and grants a company, which opens;
 * a capture on the controller's link shows that nothing of MQTT travels in clear.
 */
describe.skipIf(deploymentMissing())('a deployment with TLS on every link', () => {
  let deployment: Deployment;
  let capture: Capture;
  let controller: ProvisionedController;
  let daemon: SpawnedProcess;
  let browser: Browser;

  beforeAll(async () => {
    deployment = await createDeployment();
    await deployment.startServer({
      dataDir: join(deployment.work, 'cloud-data'),
      caddyData: join(deployment.work, 'caddy'),
    });
    // From before the provisioning call: the capture holds the controller's every connection to the server.
    capture = await startCapture(deployment.lab, deployment.controllerHost, {
      peer: deployment.server.host.address,
      file: join(deployment.work, 'controller.pcap'),
    });
    ({ controller, daemon } = await deployment.startController());
    browser = await deployment.launchPhone();
  }, 110_000);

  afterAll(async () => {
    await capture?.stop();
    await deployment?.remove();
  });

  it('lets a customer sign up with a passkey, pair and grant on the phone, and a company open', async () => {
    const { site } = deployment.server;
    const { company, keyRef, requestUrl } = await grantOnThePhone(site, browser, controller);
    expect(new URL(requestUrl).origin).toBe(`https://${SERVER_NAME}`);
    const opened = await site.call('open', {
      ...company,
      key_ref: keyRef,
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
    it('holds no MQTT in clear and no password bytes: every byte is TLS', async () => {
      await capture.stop();
      const reading = await readCapture(capture.file);
      expect(controller.brokerUrl).toBe(`mqtts://${SERVER_NAME}:${MQTT_TLS_PORT}`);
      expect(reading.brokerTlsFrames).toBeGreaterThan(0);
      expect(reading.clearConnects).toEqual([]);
      expect(reading.holds(controller.password)).toBe(false);
      expect(reading.holds(controller.commandKey)).toBe(false);
      expect(reading.nonTlsPorts, reading.nonTlsFrames.join('\n')).toEqual([]);
    });

    it('would show a CONNECT sent in clear to the broker’s port, with its password, which the broker refuses', async () => {
      // The same capture and reading, of a client that forgot TLS: what the reading above found none of.
      const clear = await startCapture(deployment.lab, deployment.controllerHost, {
        peer: deployment.server.host.address,
        file: join(deployment.work, 'clear.pcap'),
      });
      const answered = await connectInClear(deployment, controller);
      await clear.stop();
      const reading = await readCapture(clear.file);
      expect(reading.clearConnects).toEqual([controller.username]);
      expect(reading.holds(controller.password)).toBe(true);
      expect(answered).toBe('closed without CONNACK');
    });
  });
});

/**
 * An MQTT CONNECT with the controller's credentials, in clear, from the controller's host to the broker's TLS
 * port; says whether a CONNACK came back.
 */
async function connectInClear(deployment: Deployment, controller: ProvisionedController): Promise<string> {
  const script = `
    const socket = require('node:net').connect(${MQTT_TLS_PORT}, '${SERVER_NAME}');
    const field = (text) => { const b = Buffer.from(text); return Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]); };
    const body = Buffer.concat([field('MQTT'), Buffer.from([4, 0xc2, 0, 30]), field('clear-check'),
      field(process.env.USER_NAME), field(process.env.PASSWORD)]);
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body])));
    socket.on('data', (data) => { if (data[0] === 0x20) { console.log('CONNACK'); process.exit(0); } });
    socket.on('close', () => { console.log('closed without CONNACK'); process.exit(0); });
    socket.on('error', () => {});
    setTimeout(() => { console.log('no answer'); process.exit(0); }, 10000);`;
  const printed = await deployment.lab.exec(deployment.controllerHost, process.execPath, ['-e', script], {
    ...process.env,
    USER_NAME: controller.username,
    PASSWORD: controller.password,
  });
  return printed.trim();
}
