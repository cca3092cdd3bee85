import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, connectAsync, type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { countWaiting } from '../../device/runtime/outbox.js';
import { readStatus } from '../../device/runtime/status.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  type Ack,
  ackSchema,
  type DeviceState,
  stateSchema,
  type Telemetry,
  telemetrySchema,
} from '../../shared/protocol/messages.js';
import { verifyAck } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { command, DEVICE_ID, keys, makeConfig, tempDir } from './fixtures.js';

/** Plays the cloud: publishes commands and collects what the device sends. */
async function cloudClient(url: string) {
  const client: MqttClient = await connectAsync(url, { clientId: 'cloud', reconnectPeriod: 100 });
  const acks: Ack[] = [];
  const states: DeviceState[] = [];
  const telemetry: Telemetry[] = [];
  client.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString());
    if (topic.endsWith('/ack')) acks.push(ackSchema.parse(body));
    if (topic.endsWith('/state')) states.push(stateSchema.parse(body));
    if (topic.endsWith('/telemetry')) telemetry.push(telemetrySchema.parse(body));
  });
  await client.subscribeAsync(
    [
      deviceTopic('test', DEVICE_ID, 'ack'),
      deviceTopic('test', DEVICE_ID, 'state'),
      deviceTopic('test', DEVICE_ID, 'telemetry'),
    ],
    { qos: 1 },
  );
  return { client, acks, states, telemetry };
}

describe('controller over MQTT', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloud: SigningKey;
  let device: SigningKey;
  let broker: AedesBroker;
  let config: DeviceConfig;
  let controller: Controller | null;
  let simulated: SimulatedDriver;
  let cloudSide: Awaited<ReturnType<typeof cloudClient>> | null;

  /** The acks and PUBACKs the controller writes to the broker, in the order they leave. */
  let sent: ('ack' | 'puback')[];

  const startController = async (clockSynced = true) => {
    simulated = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    controller = new Controller(config, {
      drivers: { simulated },
      clockProbe: async () => clockSynced,
      reconnectMinMs: 50,
      log: () => undefined,
      connect: (url, options) => {
        const client = connect(url, options);
        client.on('packetsend', (packet) => {
          if (packet.cmd === 'puback') sent.push('puback');
          if (packet.cmd === 'publish' && packet.topic.endsWith('/ack')) sent.push('ack');
        });
        return client;
      },
    });
    await controller.start();
    return controller;
  };

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    broker = new AedesBroker();
    await broker.start();
    config = await makeConfig(dir, {
      cloudKey: cloud,
      deviceKey: device,
      patch: { mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 } },
    });
    controller = null;
    cloudSide = null;
    sent = [];
  });

  afterEach(async () => {
    await controller?.stop();
    await cloudSide?.client.endAsync();
    await broker.stop();
    await cleanup();
  });

  it('announces itself, executes a command and sends a signed acknowledgement', async () => {
    cloudSide = await cloudClient(broker.url);
    const c = await startController();
    await waitFor(() => cloudSide!.states.some((s) => s.online), 'the online state');
    expect(cloudSide.states.find((s) => s.online)?.objects?.map((o) => o.id)).toEqual(['gate', 'garage']);

    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => cloudSide!.acks.length === 1, 'the acknowledgement');
    expect(cloudSide.acks[0]).toMatchObject({ command_id: cmd.id, outcome: 'opened' });
    expect(verifyAck(device.publicKey, cloudSide.acks[0]!)).toBe(true);
    await waitFor(() => c.outbox.size === 0, 'the outbox to empty');

    await c.stop();
    controller = null;
    expect(await countWaiting(config.outbox_dir)).toBe(0);
    await waitFor(() => cloudSide!.states.at(-1)?.online === false, 'the offline state');
    const status = await readStatus(config.state_dir);
    expect(status).toMatchObject({ running: false, last_command: { id: cmd.id, outcome: 'opened' } });
    expect(simulated.isActive('gate')).toBe(false);
  });

  it("writes a command's acknowledgement ahead of the command's PUBACK", async () => {
    cloudSide = await cloudClient(broker.url);
    await startController();
    await waitFor(() => cloudSide!.states.some((s) => s.online), 'the online state');
    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => sent.length === 2, 'the acknowledgement and the PUBACK');
    expect(sent).toEqual(['ack', 'puback']);
  });

  it('with an unsynchronised clock says so in telemetry and refuses commands naming the clock', async () => {
    cloudSide = await cloudClient(broker.url);
    await startController(false);
    await waitFor(() => cloudSide!.telemetry.length > 0, 'telemetry');
    expect(cloudSide.telemetry[0]).toMatchObject({ device_id: DEVICE_ID, clock_synced: false, outbox: 0 });

    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => cloudSide!.acks.length === 1, 'the refusal');
    expect(cloudSide.acks[0]).toMatchObject({
      command_id: cmd.id,
      outcome: 'refused',
      reason: 'clock_unsynced',
    });
    expect(simulated.pulses.size).toBe(0);
  });

  it('is marked offline by its will when the connection drops, and comes back by itself', async () => {
    cloudSide = await cloudClient(broker.url);
    const c = await startController();
    await waitFor(() => cloudSide!.states.some((s) => s.online), 'the online state');
    broker.clients.get(DEVICE_ID)!.conn.destroy();
    await waitFor(() => cloudSide!.states.some((s) => !s.online), 'the will message');
    await waitFor(() => cloudSide!.states.at(-1)?.online === true && c.session.connected, 'the reconnection');
  });

  it('keeps acknowledgements on disk while offline and sends them after reconnecting', async () => {
    const c = await startController();
    await waitFor(() => c.session.connected, 'the device to connect');
    await broker.stop();
    await waitFor(() => !c.session.connected, 'the device to notice the broker is gone');

    // A command that reached the device just before the connection dropped.
    const cmd = command(cloud, Date.now());
    await c.commands.handle(JSON.stringify(cmd));
    expect(c.outbox.size).toBe(1);
    expect(await countWaiting(config.outbox_dir)).toBe(1);

    await broker.start();
    cloudSide = await cloudClient(broker.url);
    await waitFor(() => cloudSide!.acks.some((a) => a.command_id === cmd.id), 'the kept acknowledgement');
    await waitFor(() => c.outbox.size === 0, 'the outbox to empty');
    await c.stop();
    controller = null;
    expect(await countWaiting(config.outbox_dir)).toBe(0);
  });

  it('sends again an ack the broker refused, and still stops', async () => {
    cloudSide = await cloudClient(broker.url);
    const c = await startController();
    await waitFor(() => cloudSide!.states.some((s) => s.online), 'the online state');
    broker.refuseAcks = 1;

    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => cloudSide!.acks.length === 1, 'the acknowledgement, after reconnecting');
    expect(broker.refuseAcks).toBe(0);
    expect(cloudSide.acks[0]).toMatchObject({ command_id: cmd.id, outcome: 'opened' });
    await waitFor(() => c.outbox.size === 0, 'the outbox to empty');
    // The refused copy is never acknowledged: stopping must not wait for it.
    await c.stop();
    controller = null;
    expect(await countWaiting(config.outbox_dir)).toBe(0);
  });

  it('refuses a command issued before it started, and removes the executed ids earlier versions kept', async () => {
    const cmd = command(cloud, Date.now() - 1000);
    await mkdir(config.state_dir, { recursive: true });
    const earlier = [join(config.state_dir, 'executed.json'), join(config.state_dir, 'executed.log')];
    await writeFile(earlier[0]!, JSON.stringify({ [cmd.id]: cmd.expires_at + 60_000 }));
    await writeFile(earlier[1]!, `${cmd.id} ${cmd.expires_at + 60_000}\n`);
    const c = await startController();
    expect(await c.commands.handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'stale',
    });
    expect(simulated.pulses.get('gate')).toBeUndefined();
    expect(earlier.filter((file) => existsSync(file))).toEqual([]);
  });

  it('sends acknowledgements left by a previous run', async () => {
    const first = await startController();
    await waitFor(() => first.session.connected, 'the device to connect');
    await broker.stop();
    await waitFor(() => !first.session.connected, 'the device to notice the broker is gone');
    const cmd = command(cloud, Date.now());
    await first.commands.handle(JSON.stringify(cmd));
    await first.stop();
    controller = null;
    expect(await countWaiting(config.outbox_dir)).toBe(1);

    await broker.start();
    cloudSide = await cloudClient(broker.url);
    const second = await startController();
    await waitFor(
      () => cloudSide!.acks.some((a) => a.command_id === cmd.id),
      'the acknowledgement from disk',
    );
    await waitFor(() => second.outbox.size === 0, 'the outbox to empty');
  });
});
