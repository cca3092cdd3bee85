import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { statusCommand } from '../../device/cli/status.js';
import { type DeviceConfigInput, loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { readStatus } from '../../device/runtime/status.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Ack, ackSchema } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { command, DEVICE_ID, keys, tempDir } from './fixtures.js';

/**
 * The controller's link to a broker over TLS (docs/design.md section 9): pinned to `mqtt.ca_file`, taking signed
 * commands through it, and saying once, naming the host, when the broker's certificate does not verify.
 */
describe('controller over mqtts', () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let broker: AedesBroker;
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloud: SigningKey;
  let device: SigningKey;
  let controller: Controller | null;
  let cloudSide: MqttClient | null;
  let log: string[];

  beforeAll(async () => {
    [ca, otherCa] = await Promise.all([makeTestCa('Broker CA'), makeTestCa('Some other CA')]);
    const issued = await ca.issue(['localhost']);
    broker = new AedesBroker({ tls: { cert: issued.cert, key: issued.key } });
    await broker.start();
  });

  afterAll(async () => {
    await broker.stop();
    ca.remove();
    otherCa.remove();
  });

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    controller = null;
    cloudSide = null;
    log = [];
  });

  afterEach(async () => {
    await controller?.stop();
    await cloudSide?.endAsync();
    await cleanup();
  });

  /** Writes the config as the installer has it (ca_file relative to it) and starts the daemon from it. */
  async function start(mqtt: Partial<DeviceConfigInput['mqtt']>): Promise<{ configFile: string }> {
    const keyFile = join(dir, 'device-key.pem');
    await writeFile(keyFile, device.toPem(), { mode: 0o600 });
    const input: DeviceConfigInput = {
      cloud_url: 'https://gatelink.example.com',
      device_id: DEVICE_ID,
      mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200, ...mqtt },
      topic_prefix: 'test',
      command_key: cloud.publicKey.base64,
      private_key_file: 'device-key.pem',
      state_dir: 'state',
      objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
      clock: { check: 'none', interval_s: 30 },
    };
    const configFile = join(dir, 'device.json');
    await writeFile(configFile, JSON.stringify(input), { mode: 0o600 });
    const config = loadConfig(configFile);
    const simulated = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    controller = new Controller(config, {
      drivers: { simulated },
      clockProbe: async () => true,
      reconnectMinMs: 20,
      log: (line) => log.push(line),
    });
    await controller.start();
    return { configFile };
  }

  it('connects with the CA of mqtt.ca_file (a bundle) and opens on a signed command', async () => {
    // A bundle, as an installer may hold both the cloud's root and the broker's CA in one file.
    await writeFile(join(dir, 'bundle.pem'), `${otherCa.cert}\n${ca.cert}`);
    await start({ ca_file: 'bundle.pem' });
    cloudSide = await connectAsync(broker.url, { clientId: 'cloud', ca: ca.cert });
    const acks: Ack[] = [];
    cloudSide.on('message', (_topic, payload) => acks.push(ackSchema.parse(JSON.parse(payload.toString()))));
    await cloudSide.subscribeAsync(deviceTopic('test', DEVICE_ID, 'ack'), { qos: 1 });
    await waitFor(() => controller?.session.connected === true, 'the controller to connect over TLS');

    const cmd = command(cloud, Date.now());
    await cloudSide.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), { qos: 1 });
    await waitFor(() => acks.length === 1, 'the acknowledgement');
    expect(acks[0]).toMatchObject({ command_id: cmd.id, outcome: 'opened' });
    expect(log.filter((line) => /certificate/.test(line))).toEqual([]);
  });

  it('[attack:device.broker-impostor] with the wrong CA says once, naming the host, why the certificate does not verify, and status shows it', async () => {
    await copyFile(otherCa.certFile, join(dir, 'wrong-ca.pem'));
    const before = broker.connections;
    const { configFile } = await start({ ca_file: 'wrong-ca.pem' });
    // Several attempts, each refused by the controller: still one line.
    await waitFor(() => broker.connections >= before + 4, 'four attempts to connect');
    const lines = log.filter((line) => /certificate/.test(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^mqtt: the broker's certificate for localhost does not verify: .+ \([A-Z_]+\); set mqtt\.ca_file to the CA that signed it$/,
    );
    expect(controller?.session.connected).toBe(false);

    await controller?.status.write();
    const status = await readStatus(join(dir, 'state'));
    expect(`mqtt: ${status?.mqtt.last_error}`).toBe(lines[0]);
    const printed: string[] = [];
    expect(await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l) })).toBe(
      1,
    );
    expect(printed.join('\n')).toMatch(
      /connection\s+NOT connected to mqtts:\/\/localhost:\d+ \(retrying; the broker's certificate for localhost does not verify/,
    );
  });

  it("checks each node of a broker cluster by its own name, not by the first node's", async () => {
    // The first node's certificate is for localhost only, the second's for 127.0.0.1 only.
    const byIp = await ca.issue(['127.0.0.1']);
    const second = new AedesBroker({ tls: { cert: byIp.cert, key: byIp.key } });
    await second.start();
    try {
      await copyFile(ca.certFile, join(dir, 'ca.pem'));
      await start({ url: `${broker.url},mqtts://127.0.0.1:${second.port}`, ca_file: 'ca.pem' });
      await waitFor(() => controller?.session.connected === true, 'the first node');
      expect(broker.clients.get(DEVICE_ID)?.closed).toBe(false);
      await broker.stop();
      await waitFor(() => second.clients.get(DEVICE_ID)?.closed === false, 'the second node');
      await waitFor(() => controller?.session.connected === true, 'the session on the second node');
      expect(log.filter((line) => /certificate/.test(line))).toEqual([]);
    } finally {
      await controller?.stop();
      controller = null;
      await second.stop();
      await broker.start();
    }
  });

  it('without mqtt.ca_file trusts only the system store, which does not hold a private CA', async () => {
    await start({});
    await waitFor(() => log.some((line) => /certificate/.test(line)), 'the certificate line');
    expect(log.find((line) => /certificate/.test(line))).toMatch(
      /the broker's certificate for localhost does not verify: .+; set mqtt\.ca_file/,
    );
  });
});
