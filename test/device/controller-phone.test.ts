import { connectAsync, type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Controller } from '../../device/runtime/controller.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Ack, ackSchema, type Telemetry, telemetrySchema } from '../../shared/protocol/messages.js';
import { verifyAck } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { FakeTermux } from './fake-termux.js';
import { command, DEVICE_ID, keys, makeConfig, tempDir } from './fixtures.js';

/**
 * A controller with a phone object (docs/design.md section 12.6), over an embedded broker, on fake Termux:API
 * commands: the readiness lines at start, the call's result in the signed acknowledgement, the phone's battery
 * and network in telemetry, the wake lock taken and released; and none of it for a controller without phones.
 */
describe('controller on a phone', () => {
  let cleanup: () => Promise<void>;
  let cloud: SigningKey;
  let device: SigningKey;
  let broker: AedesBroker;
  let termux: FakeTermux;
  let controller: Controller | null = null;
  let client: MqttClient | null = null;
  let dir: string;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    broker = new AedesBroker();
    await broker.start();
    termux = await FakeTermux.create('rejects');
  });
  afterEach(async () => {
    await controller?.stop();
    controller = null;
    await client?.endAsync();
    client = null;
    await broker.stop();
    await termux.dispose();
    await cleanup();
  });

  const configWith = (objects: Parameters<typeof makeConfig>[1]['patch']) =>
    makeConfig(dir, {
      cloudKey: cloud,
      deviceKey: device,
      patch: {
        mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 },
        ...objects,
      },
    });

  it('checks readiness at start, opens by a call, signs its result and reports battery and network', async () => {
    const config = await configWith({
      objects: [{ id: 'gate', label: 'Gate', kind: 'phone', number: '+491701234567', poll_ms: 100 }],
    });
    client = await connectAsync(broker.url, { clientId: 'cloud' });
    const acks: Ack[] = [];
    const telemetry: Telemetry[] = [];
    client.on('message', (topic, payload) => {
      const body = JSON.parse(payload.toString());
      if (topic.endsWith('/ack')) acks.push(ackSchema.parse(body));
      if (topic.endsWith('/telemetry')) telemetry.push(telemetrySchema.parse(body));
    });
    await client.subscribeAsync(
      [deviceTopic('test', DEVICE_ID, 'ack'), deviceTopic('test', DEVICE_ID, 'telemetry')],
      {
        qos: 1,
      },
    );
    const lines: string[] = [];
    controller = new Controller(config, {
      env: termux.env,
      clockProbe: async () => true,
      reconnectMinMs: 50,
      log: (line) => lines.push(line),
    });
    await controller.start();
    const readiness = lines.filter((line) => line.startsWith('phone: '));
    expect(readiness).toEqual([
      expect.stringMatching(/^phone: start on boot: install Termux:Boot/),
      expect.stringMatching(/^phone: battery optimisation: unknown/),
    ]);

    await waitFor(() => telemetry.length > 0, 'the telemetry');
    expect(telemetry[0]).toMatchObject({
      battery: { percentage: 87, plugged: false },
      network: { sim: 'ready', type: 'lte' },
    });

    const cmd = command(cloud, Date.now());
    await client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), { qos: 1 });
    await waitFor(() => acks.length === 1, 'the acknowledgement');
    expect(acks[0]).toMatchObject({ command_id: cmd.id, outcome: 'opened', call: 'unanswered' });
    expect(verifyAck(device.publicKey, acks[0]!)).toBe(true);
    expect(await termux.dialled()).toEqual(['+491701234567']);

    await controller.stop();
    controller = null;
    const commands = (await termux.state()).runs.map((run) => run.command);
    expect(commands[0]).toBe('termux-wake-lock');
    expect(commands.at(-1)).toBe('termux-wake-unlock');
  });

  it('runs no Termux command and sends no phone fields without phone objects', async () => {
    const config = await configWith({});
    controller = new Controller(config, {
      env: termux.env,
      clockProbe: async () => true,
      reconnectMinMs: 50,
      log: () => undefined,
    });
    await controller.start();
    const reading = await controller.telemetry.reading();
    expect(reading).not.toHaveProperty('battery');
    expect(reading).not.toHaveProperty('network');
    await controller.stop();
    controller = null;
    expect((await termux.state()).runs).toEqual([]);
  });
});
