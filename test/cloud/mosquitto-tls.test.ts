import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import { BrokerEnv, dispatch, dispatchRequest, insertOpenEntry } from '../support/broker-env.js';
import { mosquittoAvailable } from '../support/mosquitto.js';
import { type IssuedCertificate, makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';

/*
 * The shipped Mosquitto recipe (deploy/mosquitto/README.md) as production runs it: controllers on the TLS
 * listener, the cloud on the plain one on loopback; setup-dynsec.sh over TLS (startMosquitto runs it so); a
 * renewed certificate taken on SIGHUP while sessions stay; and the cloud over mqtts:// with MQTT_CA_FILE.
 */
const run = promisify(execFile);
const SETUP = resolve(import.meta.dirname, '../../deploy/mosquitto/setup-dynsec.sh');

describe.skipIf(!mosquittoAvailable)('Mosquitto with its TLS listener', () => {
  let env: BrokerEnv;
  let ca: TestCa;
  let folder: string;
  let first: IssuedCertificate;
  let broker: ControllerLink;
  const files = () => ({ certFile: join(folder, 'fullchain.pem'), keyFile: join(folder, 'privkey.pem') });

  beforeAll(async () => {
    ca = await makeTestCa('Broker CA');
    folder = mkdtempSync(join(tmpdir(), 'gatelink-mosquitto-tls-'));
    first = await ca.issue(['127.0.0.1']);
    copyFileSync(first.certFile, files().certFile);
    copyFileSync(first.keyFile, files().keyFile);
    env = await BrokerEnv.open('external', { mosquittoTls: { ...files(), caFile: ca.certFile } });
    broker = await env.start({}, { MQTT_PUBLIC_URL: mosquitto().deviceUrl });
  });
  afterAll(async () => {
    await env?.close();
    ca?.remove();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const mosquitto = () => {
    if (!env.mosquitto) throw new Error('no Mosquitto');
    return env.mosquitto;
  };
  const tlsPort = () => mosquitto().tlsPort ?? 0;
  const presented = () =>
    new Promise<string>((done) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort(), ca: ca.cert });
      socket.once('secureConnect', () => {
        done(socket.getPeerX509Certificate()?.fingerprint256 ?? 'none');
        socket.destroy();
      });
      socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    });

  it('takes controllers over mqtts:// while the cloud uses the plain listener on loopback', async () => {
    expect(new URL(mosquitto().cloudUrl).port).toBe(String(mosquitto().port));
    expect(broker.deviceUrl).toBe(`mqtts://127.0.0.1:${tlsPort()}`);
    const device = await env.onlineDevice(broker, { ca: ca.cert });
    const entry = await insertOpenEntry(env.db, device.id);
    const result = dispatch(broker, dispatchRequest(device.id, entry));
    const ack = await device.ack(await device.nextCommand());
    expect(await result).toEqual({ kind: 'acked', ack });
  });

  it('takes a renewed certificate on SIGHUP, and the connected controller stays', async () => {
    const device = await env.onlineDevice(broker, { ca: ca.cert });
    let closed = false;
    device.client.on('close', () => {
      closed = true;
    });
    const renewed = await ca.issue(['127.0.0.1']);
    copyFileSync(renewed.certFile, files().certFile);
    copyFileSync(renewed.keyFile, files().keyFile);
    mosquitto().reload();
    const expected = new X509Certificate(renewed.cert).fingerprint256;
    await waitFor(async () => (await presented()) === expected, 'the renewed certificate');
    expect(closed).toBe(false);
    const entry = await insertOpenEntry(env.db, device.id);
    const result = dispatch(broker, dispatchRequest(device.id, entry));
    const ack = await device.ack(await device.nextCommand());
    expect(await result).toEqual({ kind: 'acked', ack });
  });

  it('lets the cloud connect over mqtts:// with MQTT_CA_FILE, and names the certificate without it', async () => {
    const url = `mqtts://cloud:${mosquitto().cloudPassword}@127.0.0.1:${tlsPort()}`;
    const overTls = await env.start(
      { connectTimeoutMs: 15_000 },
      { MQTT_URL: url, MQTT_CA_FILE: ca.certFile, MQTT_PUBLIC_URL: mosquitto().deviceUrl },
    );
    expect(overTls.linked()).toBe(true);
    await env.stopBroker(overTls);
    await expect(
      env.start({ connectTimeoutMs: 15_000 }, { MQTT_URL: url, MQTT_PUBLIC_URL: mosquitto().deviceUrl }),
    ).rejects.toThrow(
      /certificate for 127\.0\.0\.1 does not verify: .*; set MQTT_CA_FILE to the CA that signed it$/,
    );
  });

  describe('setup-dynsec.sh', () => {
    const setup = (extra: Record<string, string>) =>
      run('sh', [SETUP], {
        env: {
          ...process.env,
          MQTT_HOST: '127.0.0.1',
          MQTT_PORT: String(tlsPort()),
          DYNSEC_ADMIN_PASSWORD: 'not-needed-to-fail',
          CLOUD_PASSWORD: 'x',
          MQTT_CONNECT_TIMEOUT: '2',
          ...extra,
        },
      }).then(
        () => 'succeeded',
        (error: { stderr: string }) => error.stderr,
      );

    it('gives up with a clear line when it talks plain MQTT to the TLS listener', async () => {
      expect(await setup({})).toMatch(
        /^no answer from Mosquitto at 127\.0\.0\.1:\d+ within 2 s: .*MQTT_CAFILE/,
      );
    });

    it('says the certificate is the problem when the CA is not the one that signed it', async () => {
      const other = await makeTestCa('Another CA');
      try {
        expect(await setup({ MQTT_CAFILE: other.certFile })).toMatch(
          /^the broker's certificate at 127\.0\.0\.1:\d+ does not verify \(verify error:.*\): the certificate must be for 127\.0\.0\.1 and signed by the CA in MQTT_CAFILE/,
        );
      } finally {
        other.remove();
      }
    });
  });
});
