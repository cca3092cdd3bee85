import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Controller } from '../../device/runtime/controller.js';
import { EarlyConnection } from '../../device/runtime/early-connection.js';
import { prepareController } from '../../device/runtime/prepare.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { DEVICE_ID, keys, tempDir } from './fixtures.js';

/**
 * The connection the daemon opens before it loads the rest (docs/design.md section 12.1) follows the config's
 * rules for the broker link: the CA of mqtt.ca_file, and never a password in the clear to a broker off the board.
 */
let ca: TestCa;
let broker: AedesBroker;
let dir: string;
let cleanup: () => Promise<void>;
let controller: Controller | undefined;

beforeAll(async () => {
  ca = await makeTestCa();
  const issued = await ca.issue(['localhost']);
  broker = new AedesBroker({ tls: { cert: issued.cert, key: issued.key } });
  await broker.start();
});
afterAll(async () => {
  await broker.stop();
  ca.remove();
});
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await cleanup();
});

async function configFile(mqtt: Record<string, unknown>): Promise<string> {
  const { cloud, device } = keys();
  await writeFile(join(dir, 'device-key.pem'), device.toPem(), { mode: 0o600 });
  const path = join(dir, 'device.yaml');
  const config = {
    cloud_url: 'https://gatelink.example.com',
    device_id: DEVICE_ID,
    mqtt: { username: DEVICE_ID, password: 'secret', ...mqtt },
    topic_prefix: 'test',
    command_key: cloud.publicKey.base64,
    private_key_file: 'device-key.pem',
    state_dir: 'state',
    objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
    clock: { check: 'none' },
  };
  await writeFile(path, stringify(config));
  return path;
}

describe('the early connection', () => {
  it('verifies the broker with mqtt.ca_file, and the session takes it over', async () => {
    await copyFile(ca.certFile, join(dir, 'broker-ca.pem'));
    const path = await configFile({ url: broker.url, ca_file: 'broker-ca.pem' });
    const prepared = await prepareController(path, { log: () => undefined });
    controller = prepared.controller;
    await waitFor(() => broker.clients.has(DEVICE_ID), 'the early connection over TLS');
    const early = broker.clients.get(DEVICE_ID);
    await controller.start();
    await waitFor(() => controller?.session.connected === true, 'the session to be connected');
    expect(broker.clients.get(DEVICE_ID)).toBe(early);
  });

  it('[attack:device.plain-mqtt] is not opened in the clear to a broker off the board', async () => {
    const refused = await configFile({ url: 'mqtt://192.0.2.1:1883' });
    expect(await EarlyConnection.open(await readFile(refused, 'utf8'), refused)).toBeNull();
    const trusted = await configFile({ url: 'mqtt://192.0.2.1:1883', insecure: true });
    const allowed = await EarlyConnection.open(await readFile(trusted, 'utf8'), trusted);
    expect(allowed).not.toBeNull();
    allowed?.close();
  });
});
