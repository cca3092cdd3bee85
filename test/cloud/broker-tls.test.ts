import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import {
  BrokerEnv,
  dispatch,
  dispatchRequest,
  insertOpenEntry,
  journalState,
} from '../support/broker-env.js';
import { tryConnect } from '../support/fake-device.js';
import { freePort } from '../support/ports.js';
import { type IssuedCertificate, makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';

/*
 * The embedded broker's TLS listener (cloud/README.md, "TLS for controllers"): devices that pin the operator's
 * CA connect over mqtts:// and open gates; a client that trusts another CA, or expects another name, is refused;
 * a renewed certificate serves the next connection while connected devices stay; the plain listener is then
 * on loopback only.
 */
describe('the embedded broker over TLS', () => {
  let env: BrokerEnv;
  let ca: TestCa;
  let otherCa: TestCa;
  let folder: string;
  let first: IssuedCertificate;
  let certFile: string;
  let keyFile: string;
  let broker: ControllerLink;

  const tlsEnv = () => ({ MQTT_TLS_CERT_FILE: certFile, MQTT_TLS_KEY_FILE: keyFile, MQTT_TLS_PORT: '0' });
  /** Writes a pair where the broker reads it, as a renewal does. */
  const install = (pair: { certFile: string; keyFile: string }) => {
    copyFileSync(pair.certFile, certFile);
    copyFileSync(pair.keyFile, keyFile);
  };

  beforeAll(async () => {
    [env, ca, otherCa] = await Promise.all([
      BrokerEnv.open('embedded'),
      makeTestCa(),
      makeTestCa('Another CA'),
    ]);
    folder = mkdtempSync(join(tmpdir(), 'gatelink-broker-tls-'));
    certFile = join(folder, 'fullchain.pem');
    keyFile = join(folder, 'privkey.pem');
    first = await ca.issue(['127.0.0.1']);
    install(first);
    broker = await env.start({ certificatePollMs: 50 }, tlsEnv());
  });
  afterAll(async () => {
    await env?.close();
    ca?.remove();
    otherCa?.remove();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const tlsPort = () => Number(new URL(broker.deviceUrl).port);

  /** The fingerprint of the certificate a new TLS connection is shown, or the handshake's error code. */
  const presented = (options: { ca?: string; servername?: string } = {}) =>
    new Promise<string>((resolve) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port: tlsPort(),
        ca: options.ca ?? ca.cert,
        ...options,
      });
      socket.once('secureConnect', () => {
        resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? 'none');
        socket.destroy();
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

  it('gives devices an mqtts:// address on the host of the base URL', () => {
    const url = new URL(broker.deviceUrl);
    expect(url.protocol).toBe('mqtts:');
    expect(url.hostname).toBe('127.0.0.1');
    expect(tlsPort()).toBeGreaterThan(0);
  });

  it('lets a device that pins the CA connect and opens a gate through it', async () => {
    const device = await env.onlineDevice(broker, { ca: ca.cert });
    const entry = await insertOpenEntry(env.db, device.id);
    const result = dispatch(broker, dispatchRequest(device.id, entry));
    const ack = await device.ack(await device.nextCommand());
    expect(await result).toEqual({ kind: 'acked', ack });
    await waitFor(
      async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
      'the acknowledgement in the journal',
    );
    expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened' });
  });

  it('is refused by a client that trusts another CA, or expects another host name', async () => {
    const account = await env.provision(broker);
    const login = { clientId: account.id, username: account.id, password: account.password };
    expect(await tryConnect(broker.deviceUrl, { ...login, ca: otherCa.cert })).toEqual({
      ok: false,
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
    expect(await tryConnect(broker.deviceUrl, { ...login, ca: ca.cert, servername: 'gate.example' })).toEqual(
      { ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    );
    const right = await tryConnect(broker.deviceUrl, { ...login, ca: ca.cert });
    expect(right.ok).toBe(true);
    if (right.ok) await right.client.endAsync();
  });

  it('closes a connection whose handshake never completes, as a silent CONNECT', async () => {
    const quick = await env.start({ connectionLimits: { connectTimeoutMs: 300 } }, tlsEnv());
    try {
      const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(quick.deviceUrl).port) });
      await new Promise((resolve) => socket.once('close', resolve));
      const refusals = env.log.entries.filter(
        (entry) => entry.msg === 'refused an MQTT connection' && entry.fields.reason === 'connect_timeout',
      );
      expect(refusals).toHaveLength(1);
    } finally {
      await env.stopBroker(quick);
    }
  });

  it('serves a renewed certificate to new connections while a connected device stays, and keeps it over a bad pair', async () => {
    const device = await env.onlineDevice(broker, { ca: ca.cert });
    let closed = false;
    device.client.on('close', () => {
      closed = true;
    });
    expect(await presented()).toBe(fingerprint(first.cert));

    const renewed = await ca.issue(['127.0.0.1']);
    install(renewed);
    await waitFor(async () => (await presented()) === fingerprint(renewed.cert), 'the renewed certificate');

    // A key that is not the certificate's: logged, and the broker keeps the renewed pair.
    const stranger = await otherCa.issue(['127.0.0.1']);
    const beforeStranger = env.log.entries.length;
    copyFileSync(stranger.keyFile, keyFile);
    await waitFor(
      () =>
        env.log.entries
          .slice(beforeStranger)
          .some((entry) => entry.level === 'error' && entry.msg.includes('do not make a certificate')),
      'the bad pair logged',
    );
    expect(await presented()).toBe(fingerprint(renewed.cert));

    // A file caught empty, as a renewal that truncates before it writes leaves it for a moment: kept as well.
    const logged = env.log.entries.length;
    writeFileSync(certFile, '');
    await waitFor(
      () =>
        env.log.entries.slice(logged).some((entry) => entry.msg.includes('the certificate file is empty')),
      'the empty certificate logged',
    );
    expect(await presented()).toBe(fingerprint(renewed.cert));
    copyFileSync(renewed.certFile, certFile);
    copyFileSync(renewed.keyFile, keyFile);

    expect(closed).toBe(false);
    const entry = await insertOpenEntry(env.db, device.id);
    const result = dispatch(broker, dispatchRequest(device.id, entry));
    const ack = await device.ack(await device.nextCommand());
    expect(await result).toEqual({ kind: 'acked', ack });
  });

  it('refuses to start on a certificate file it cannot read, naming the setting', async () => {
    await expect(
      env.start({}, { ...tlsEnv(), MQTT_TLS_CERT_FILE: join(folder, 'missing.pem') }),
    ).rejects.toThrow(/^MQTT_TLS_CERT_FILE .*missing\.pem cannot be read: ENOENT$/);
    writeFileSync(join(folder, 'garbage.pem'), 'not a certificate');
    await expect(
      env.start({}, { ...tlsEnv(), MQTT_TLS_KEY_FILE: join(folder, 'garbage.pem') }),
    ).rejects.toThrow(/MQTT_TLS_KEY_FILE .* do not make a certificate/);
  });
});

/** This machine's first address that is not loopback, to reach a listener from "the network"; null if none. */
function outsideAddress(): string | null {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return null;
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const outside = outsideAddress();

describe.skipIf(outside === null)('the plain listener beside TLS', () => {
  let env: BrokerEnv;
  let ca: TestCa;

  beforeAll(async () => {
    [env, ca] = await Promise.all([BrokerEnv.open('embedded'), makeTestCa()]);
  });
  afterAll(async () => {
    await env?.close();
    ca?.remove();
  });

  const start = async (extra: Record<string, string> = {}) => {
    const pair = await ca.issue(['127.0.0.1']);
    const plainPort = await freePort();
    const broker = await env.start(
      {},
      {
        HOST: '0.0.0.0',
        MQTT_PORT: String(plainPort),
        MQTT_TLS_PORT: '0',
        MQTT_TLS_CERT_FILE: pair.certFile,
        MQTT_TLS_KEY_FILE: pair.keyFile,
        ...extra,
      },
    );
    return { broker, plainPort, tlsPort: Number(new URL(broker.deviceUrl).port) };
  };

  it('listens on 127.0.0.1 only, while TLS takes devices from the network', async () => {
    const { broker, plainPort, tlsPort } = await start();
    const host = outside ?? '';
    expect(await accepts(host, tlsPort)).toBe(true);
    expect(await accepts(host, plainPort)).toBe(false);
    expect(await accepts('127.0.0.1', plainPort)).toBe(true);
    await env.stopBroker(broker);
  });

  it('takes devices from the network on TLS while the web keeps to loopback behind a proxy (HOST=127.0.0.1)', async () => {
    const { broker, tlsPort } = await start({ HOST: '127.0.0.1' });
    expect(await accepts(outside ?? '', tlsPort)).toBe(true);
    await env.stopBroker(broker);
  });

  it('puts the TLS listener where MQTT_TLS_HOST says', async () => {
    const { broker, tlsPort } = await start({ MQTT_TLS_HOST: '127.0.0.1' });
    expect(await accepts(outside ?? '', tlsPort)).toBe(false);
    expect(await accepts('127.0.0.1', tlsPort)).toBe(true);
    await env.stopBroker(broker);
  });

  it('listens where MQTT_PLAIN_HOST says', async () => {
    const { broker, plainPort } = await start({ MQTT_PLAIN_HOST: '0.0.0.0' });
    expect(await accepts(outside ?? '', plainPort)).toBe(true);
    await env.stopBroker(broker);
  });
});
