import {
  cpSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayObjectConfig } from '../../device/config.js';
import { RelayGpioDriver } from '../../device/drivers/relay-gpio.js';
import { Controller } from '../../device/runtime/controller.js';
import { type Ack, ackSchema, type DeviceState, stateSchema } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { BundleServer, makeBundle, makeHome, makeReleaseTree } from '../support/release-home.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { fakeGpio, fakeSysfs, PI4_CHIPS } from './fake-gpio.js';
import { command, DEVICE_ID, gate, makeConfig, tempDir } from './fixtures.js';
import { UpdateBench } from './update-bench.js';

/**
 * The update inside the controller (docs/design.md section 12.4.3), with the relay driver on a fake GPIO: an
 * update waits for the opening in progress, holds new ones off, and the relay ends released when the daemon
 * stops to restart; a release on trial that is not healthy in time is rolled back (the timeout injected).
 */
const relay: RelayObjectConfig = {
  id: 'gate',
  label: 'Gate',
  kind: 'relay',
  line: 17,
  chip: 'auto',
  sysfs_base: 'auto',
  active_low: true,
  pulse_ms: 1000,
};
// Only its keys and its update commands: the trees, the broker and the board are this suite's own.
const bench = new UpdateBench();
const cloud = bench.cloudKey;
const device = bench.deviceKey;
let dir: { dir: string; cleanup: () => Promise<void> };
let broker: AedesBroker;
let server: BundleServer;
let controller: Controller | null = null;
let observer: MqttClient | null = null;

beforeAll(async () => {
  dir = await tempDir();
  broker = new AedesBroker();
  await broker.start();
  server = new BundleServer(DEVICE_ID, device.publicKey.base64);
  await server.start();
  await fakeSysfs(join(dir.dir, 'sysfs'), PI4_CHIPS);
});
afterAll(async () => {
  await server.stop();
  await broker.stop();
  await dir.cleanup();
});
afterEach(async () => {
  await controller?.stop();
  controller = null;
  await observer?.endAsync();
  observer = null;
});

async function watch(): Promise<{ states: DeviceState[]; acks: Ack[]; client: MqttClient }> {
  const client = await connectAsync(broker.url, { clientId: 'cloud' });
  const states: DeviceState[] = [];
  const acks: Ack[] = [];
  client.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString());
    if (topic.endsWith('/state')) states.push(stateSchema.parse(body));
    if (topic.endsWith('/ack')) acks.push(ackSchema.parse(body));
  });
  await client.subscribeAsync(
    [deviceTopic('test', DEVICE_ID, 'state'), deviceTopic('test', DEVICE_ID, 'ack')],
    { qos: 1 },
  );
  observer = client;
  return { states, acks, client };
}

describe('an update on a controller with a relay', () => {
  it('waits for the opening in progress, refuses openings meanwhile, and leaves the relay released', async () => {
    const base = join(dir.dir, 'opening');
    const tree = makeReleaseTree(base, '0.1.0');
    const home = makeHome(base, tree);
    const next = makeReleaseTree(base, '99.0.0');
    const config = await makeConfig(base, {
      cloudKey: cloud,
      deviceKey: device,
      patch: {
        cloud_url: server.origin,
        mqtt: { url: broker.url, username: DEVICE_ID, password: 'x' },
        release_key: bench.releaseKey.publicKey.base64,
        objects: [relay],
      },
    });
    const gpio = fakeGpio();
    const pulse = gate();
    const driver = new RelayGpioDriver({
      objects: [relay],
      sysfsRoot: join(dir.dir, 'sysfs'),
      Gpio: gpio.Gpio,
      sleep: () => pulse.promise,
    });
    let restarts = 0;
    controller = new Controller(config, {
      drivers: { relay: driver },
      clockProbe: async () => true,
      log: () => undefined,
      home,
      onRestart: () => {
        restarts += 1;
      },
    });
    const cloudSide = await watch();
    await controller.start();
    await waitFor(() => cloudSide.states.some((s) => s.online), 'the device online');
    const cmd = deviceTopic('test', DEVICE_ID, 'cmd');
    const now = Date.now();
    const opening = command(cloud, now, { object: 'gate', expires_at: now + 60_000 });
    await cloudSide.client.publishAsync(cmd, JSON.stringify(opening), { qos: 1 });
    await waitFor(() => [...gpio.levels.values()].includes(0), 'the relay pulled');
    const { bytes, release } = await makeBundle(next, bench.releaseKey);
    const update = bench.updateCommand(release, server.serve(1, bytes));
    await cloudSide.client.publishAsync(cmd, JSON.stringify(update), { qos: 1 });
    await waitFor(() => cloudSide.states.at(-1)?.update?.state === 'downloading', 'the downloading report');
    // Unpacked: the switch now holds openings off (until then, a command for the gate would join its pulse).
    await waitFor(
      () =>
        readdirSync(join(home, 'releases')).some((f) => f.startsWith('99.0.0-') && !f.endsWith('.partial')),
      'the release unpacked',
    );
    const second = command(cloud, Date.now(), { object: 'gate', expires_at: Date.now() + 60_000 });
    await cloudSide.client.publishAsync(cmd, JSON.stringify(second), { qos: 1 });
    await waitFor(() => cloudSide.acks.some((a) => a.command_id === second.id), 'the second answer');
    expect(cloudSide.acks.find((a) => a.command_id === second.id)).toMatchObject({ reason: 'busy' });
    expect(readlinkSync(join(home, 'current'))).toBe('releases/0.1.0-initial');
    expect(restarts).toBe(0);
    pulse.open();
    await waitFor(() => restarts === 1, 'the restart');
    // Both went out before the restart; the broker hands them on to the cloud in its own time.
    await waitFor(() => cloudSide.acks.some((a) => a.command_id === opening.id), "the opening's answer");
    expect(cloudSide.acks.find((a) => a.command_id === opening.id)).toMatchObject({ outcome: 'opened' });
    await waitFor(() => cloudSide.states.at(-1)?.update?.state === 'switched', 'the switched report');
    expect(readlinkSync(join(home, 'current'))).toMatch(/^releases\/99\.0\.0-/);
    await controller.stop();
    controller = null;
    expect([...gpio.levels.values()]).toEqual([1]);
  });

  it('rolls a release on trial back when it is not healthy in time', async () => {
    const base = join(dir.dir, 'trial');
    const home = makeHome(base, makeReleaseTree(base, '0.1.0'));
    cpSync(join(home, 'releases', '0.1.0-initial'), join(home, 'releases', '0.2.0-aaaaaaaaaaaa'), {
      recursive: true,
    });
    writeFileSync(
      join(home, 'update.json'),
      JSON.stringify({
        v: 1,
        phase: 'trial',
        rollout_id: 4,
        version: '0.2.0',
        from: '0.1.0-initial',
        to: '0.2.0-aaaaaaaaaaaa',
        starts: 1,
        at: 1,
      }),
    );
    symlinkSync('releases/0.2.0-aaaaaaaaaaaa', join(home, 'current.new'));
    renameSync(join(home, 'current.new'), join(home, 'current'));
    // A broker nobody listens on: the release never connects, so it never becomes healthy.
    const config = await makeConfig(base, {
      cloudKey: cloud,
      deviceKey: device,
      patch: { release_key: bench.releaseKey.publicKey.base64 },
    });
    const timers: { ms: number; fn: () => void }[] = [];
    let restarts = 0;
    controller = new Controller(config, {
      clockProbe: async () => true,
      log: () => undefined,
      home,
      reconnectMinMs: 60_000,
      updateSchedule: (ms, fn) => {
        timers.push({ ms, fn });
        return () => undefined;
      },
      onRestart: () => {
        restarts += 1;
      },
    });
    await controller.start();
    expect(timers.map((t) => t.ms)).toEqual([120_000]);
    timers[0]?.fn();
    await waitFor(() => restarts === 1, 'the restart');
    expect(readlinkSync(join(home, 'current'))).toBe('releases/0.1.0-initial');
    const record = JSON.parse(readFileSync(join(home, 'update.json'), 'utf8'));
    expect(record).toMatchObject({ phase: 'rolled_back', reason: 'not_healthy', version: '0.2.0' });
  });
});
