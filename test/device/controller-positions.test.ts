import { connectAsync, type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../device/config.js';
import { Controller } from '../../device/runtime/controller.js';
import { readStatus } from '../../device/runtime/status.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Ack, ackSchema, type DeviceState, stateSchema } from '../../shared/protocol/messages.js';
import {
  type PositionReport,
  positionBundleSchema,
  positionReportSchema,
  verifyPositionReport,
} from '../../shared/protocol/positions.js';
import { verifyAck } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { FakeSensorClock } from './fake-sensor-clock.js';
import { command, DEVICE_ID, keys, makeConfig, tempDir } from './fixtures.js';

/**
 * Plays the cloud: everything on the device's `ack` topic, acknowledgements and reports (alone or several in one
 * message), in arrival order.
 */
async function cloudClient(url: string) {
  const client: MqttClient = await connectAsync(url, { clientId: 'cloud', reconnectPeriod: 100 });
  const onAck: (Ack | PositionReport)[] = [];
  const states: DeviceState[] = [];
  client.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString());
    if (topic.endsWith('/ack') && body.type === 'positions')
      onAck.push(
        ...positionBundleSchema.parse(body).reports.map((report) => positionReportSchema.parse(report)),
      );
    else if (topic.endsWith('/ack'))
      onAck.push(body.type === 'position' ? positionReportSchema.parse(body) : ackSchema.parse(body));
    if (topic.endsWith('/state')) states.push(stateSchema.parse(body));
  });
  await client.subscribeAsync(
    [deviceTopic('test', DEVICE_ID, 'ack'), deviceTopic('test', DEVICE_ID, 'state')],
    { qos: 1 },
  );
  return { client, onAck, states };
}

const story = (messages: readonly (Ack | PositionReport)[]) =>
  messages.map((m) => ('type' in m ? `${m.object} ${m.position}` : `ack ${m.outcome}`));

describe('controller with a position sensor over MQTT', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloud: SigningKey;
  let device: SigningKey;
  let broker: AedesBroker;
  let config: DeviceConfig;
  let sensorClock: FakeSensorClock;
  let controller: Controller | null;
  let cloudSide: Awaited<ReturnType<typeof cloudClient>>;

  const startController = async () => {
    controller = new Controller(config, { sensorClock, reconnectMinMs: 50, log: () => undefined });
    await controller.start();
    return controller;
  };
  const verified = (message: Ack | PositionReport) =>
    'type' in message
      ? verifyPositionReport(device.publicKey, message)
      : verifyAck(device.publicKey, message);

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    broker = new AedesBroker();
    await broker.start();
    config = await makeConfig(dir, {
      cloudKey: cloud,
      deviceKey: device,
      patch: {
        mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 },
        objects: [
          {
            id: 'gate',
            label: 'Main gate',
            kind: 'simulated',
            pulse_ms: 0,
            sensor: { type: 'simulated', open_after_ms: 1500, mode: 'auto-close', close_after_ms: 20_000 },
          },
          { id: 'garage', label: 'Garage', kind: 'simulated', pulse_ms: 0 },
        ],
      },
    });
    sensorClock = new FakeSensorClock();
    controller = null;
    cloudSide = await cloudClient(broker.url);
  });

  afterEach(async () => {
    await controller?.stop();
    await cloudSide.client.endAsync();
    await broker.stop();
    await cleanup();
  });

  it('sends the acknowledgement, then the gate open, then the gate closed, each signed', async () => {
    const c = await startController();
    await waitFor(() => cloudSide.onAck.length === 1, 'the position on connect');
    expect(cloudSide.states.find((s) => s.online)?.objects).toEqual([
      { id: 'gate', label: 'Main gate', kind: 'simulated', sensor: true },
      { id: 'garage', label: 'Garage', kind: 'simulated' },
    ]);

    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => cloudSide.onAck.length === 2, 'the acknowledgement');
    sensorClock.advance(1500);
    await waitFor(() => cloudSide.onAck.length === 3, 'the gate open');
    sensorClock.advance(20_000);
    await waitFor(() => cloudSide.onAck.length === 4, 'the gate closed');

    expect(story(cloudSide.onAck)).toEqual(['gate closed', 'ack opened', 'gate open', 'gate closed']);
    expect(cloudSide.onAck.every(verified)).toBe(true);
    const [, ack, opened, closed] = cloudSide.onAck as [PositionReport, Ack, PositionReport, PositionReport];
    expect(ack.command_id).toBe(cmd.id);
    expect(opened.changed_at).toBeGreaterThanOrEqual(ack.received_at);
    expect(closed.changed_at).toBeGreaterThan(opened.changed_at);
    await waitFor(() => c.outbox.size === 0, 'the outbox to empty');
    await waitFor(
      async () => (await readStatus(config.state_dir))?.sensors[0]?.position === 'closed',
      'status',
    );
  });

  it('after a restart while the gate is open, reports it open on connect', async () => {
    await startController();
    await waitFor(() => cloudSide.onAck.length === 1, 'the position on connect');
    const cmd = command(cloud, Date.now());
    await cloudSide.client.publishAsync(deviceTopic('test', DEVICE_ID, 'cmd'), JSON.stringify(cmd), {
      qos: 1,
    });
    await waitFor(() => cloudSide.onAck.length === 2, 'the acknowledgement');
    sensorClock.advance(1500);
    await waitFor(() => cloudSide.onAck.length === 3, 'the gate open');
    await controller!.stop();

    await startController();
    await waitFor(() => cloudSide.onAck.length === 4, 'the position on connect after the restart');
    expect(story(cloudSide.onAck)).toEqual(['gate closed', 'ack opened', 'gate open', 'gate open']);
    expect(cloudSide.onAck.every(verified)).toBe(true);
  });

  it('reports the current position again on every reconnect, with the same changed_at', async () => {
    const c = await startController();
    await waitFor(() => cloudSide.onAck.length === 1, 'the position on connect');
    broker.clients.get(DEVICE_ID)!.conn.destroy();
    await waitFor(
      () => cloudSide.onAck.length === 2 && c.session.connected,
      'the position after reconnecting',
    );
    const [first, again] = cloudSide.onAck as [PositionReport, PositionReport];
    expect(again).toMatchObject({ object: 'gate', position: 'closed', changed_at: first.changed_at });
    expect(again.id).not.toBe(first.id);
  });
});
