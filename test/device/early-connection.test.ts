import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from 'aedes';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError } from '../../device/config-error.js';
import type { Controller } from '../../device/runtime/controller.js';
import { prepareController } from '../../device/runtime/prepare.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { DEVICE_ID, keys, tempDir } from './fixtures.js';

/**
 * The daemon opens its broker connection before it loads the rest (docs/design.md section 12.1): the broker sees
 * one connection, which takes no command until the controller has started and subscribes; a config that does
 * not validate closes it again.
 */
let dir: string;
let cleanup: () => Promise<void>;
let broker: AedesBroker;
let controller: Controller | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  broker = new AedesBroker();
  await broker.start();
});

afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await broker.stop();
  await cleanup();
});

/** The topics the broker has the device's connection subscribed to. */
function subscribed(client: Client | undefined): string[] {
  return Object.keys(
    (client as { subscriptions?: Record<string, unknown> } | undefined)?.subscriptions ?? {},
  );
}

async function configFile(patch: Record<string, unknown> = {}): Promise<string> {
  const { cloud, device } = keys();
  const keyFile = join(dir, 'device-key.pem');
  await writeFile(keyFile, device.toPem(), { mode: 0o600 });
  const path = join(dir, 'device.yaml');
  const config = {
    cloud_url: 'http://127.0.0.1:1',
    device_id: DEVICE_ID,
    mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret' },
    topic_prefix: 'test',
    command_key: cloud.publicKey.base64,
    private_key_file: keyFile,
    state_dir: join(dir, 'state'),
    objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
    clock: { check: 'none' },
    ...patch,
  };
  await writeFile(path, stringify(config));
  return path;
}

describe('the connection opened before the controller is built', () => {
  it('is the one the session takes over, and subscribes only once the controller has started', async () => {
    const prepared = await prepareController(await configFile(), { log: () => undefined });
    controller = prepared.controller;
    await waitFor(() => broker.clients.has(DEVICE_ID), 'the early connection');
    const early = broker.clients.get(DEVICE_ID);
    expect(subscribed(early)).toEqual([]);

    await controller.start();
    await waitFor(() => controller?.session.connected === true, 'the session to be connected');
    expect(broker.clients.get(DEVICE_ID)).toBe(early);
    expect(subscribed(early)).toEqual([`test/dev/${DEVICE_ID}/cmd`]);
  });

  it('is closed when the config does not validate', async () => {
    const path = await configFile({ objects: [] });
    await expect(prepareController(path, { log: () => undefined })).rejects.toBeInstanceOf(ConfigError);
    // Closed while connecting, the broker may never have taken it as a client.
    await waitFor(() => broker.clients.get(DEVICE_ID)?.closed !== false, 'the connection to close');
    expect(subscribed(broker.clients.get(DEVICE_ID))).toEqual([]);
  });
});
