import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { createDevice, pairDevice } from '../../cloud/rules/devices/devices.js';
import { provision } from '../../device/cli/provision.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import buildController from '../support/build.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { percentile } from './measure.js';
import { MeasuredProcess, type Memory } from './measured-process.js';
import { MqttRelay } from './mqtt-relay.js';

/**
 * `npm run bench -- device`: the controller daemon on a small board (docs/design.md section 12.1). The real
 * `gatelink-device run` (compiled, provisioned, simulated objects, clock check none) beside a bare node process
 * that connects with mqtt.js to the same broker the same way (bare-device-client.mjs), started in turns:
 * time from spawn to CONNECT, CONNACK and SUBACK as seen between them and the cloud's embedded broker
 * (mqtt-relay.ts), and memory once connected. Targets: memory within 1.25x of the bare client's, connected
 * within 1.2x of its time. Then the daemon's memory over many commands sent through the cloud, with telemetry
 * at the shortest interval allowed: it should not grow.
 *
 * BENCH_DEVICE_STARTS (5) starts of each; BENCH_DEVICE_COMMANDS (3600, an hour at one a second) commands at
 * BENCH_DEVICE_RATE (20) a second.
 */
const DEVICE_BIN = fileURLToPath(new URL('../../bin/gatelink-device.mjs', import.meta.url));
const BARE_CLIENT = fileURLToPath(new URL('./device-bare-client.mjs', import.meta.url));
const STARTS = positive('BENCH_DEVICE_STARTS', 5);
const COMMANDS = positive('BENCH_DEVICE_COMMANDS', 3600);
const RATE = positive('BENCH_DEVICE_RATE', 20);
/** Once SUBACK has gone out, the daemon publishes its state, telemetry and outbox; memory is read after that. */
const SETTLE_MS = 500;
const TELEMETRY_S = 5;
const REDUCER_WAIT_MS = 15_000;

interface Start {
  connect: number;
  connack: number;
  suback: number;
  memory: Memory;
}

interface Setup {
  configPath: string;
  deviceId: string;
  numberId: number;
  /** What the bare client needs to connect as the controller does. */
  bareEnv: Record<string, string>;
}

export async function benchDevice(): Promise<void> {
  // The daemon measured is the compiled one in dist/: built from the sources as they are now.
  buildController();
  const database = await createTestDatabase(undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-device-'));
  let cloud: RunningCloud | undefined;
  let relay: MqttRelay | undefined;
  try {
    cloud = await startCloud({ config: localCloudConfig(dataDir), database, jobs: false });
    const broker = new URL(cloud.controllerLink.deviceUrl);
    relay = await MqttRelay.start({ host: broker.hostname, port: Number(broker.port) });
    const setup = await provisioned(cloud, dataDir, relay.port);
    console.log(
      `\n## device: the controller daemon beside a bare mqtt.js client (${STARTS} starts each, in turns; medians)`,
    );
    const daemon: Start[] = [];
    const bare: Start[] = [];
    for (let i = 0; i < STARTS; i++) {
      const ours = await measureStart(relay, [DEVICE_BIN, 'run', '--config', setup.configPath], {}, dataDir);
      daemon.push(ours);
      const theirs = await measureStart(relay, [BARE_CLIENT], setup.bareEnv, dataDir);
      bare.push(theirs);
      console.log(`start ${i + 1}/${STARTS}: daemon ${brief(ours)}; bare client ${brief(theirs)}`);
    }
    report(daemon, bare);
    await measureHour(cloud, relay, setup, dataDir);
  } finally {
    await relay?.close();
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A controller provisioned as an installer does it, paired, its broker URL pointed at the relay. */
async function provisioned(cloud: RunningCloud, dataDir: string, relayPort: number): Promise<Setup> {
  const customer = await createCustomer(cloud.ctx, { displayName: 'Bench customer' });
  const created = await createDevice(cloud.ctx, { label: 'Bench barrier' });
  const objectsPath = join(dataDir, 'objects.yaml');
  writeFileSync(
    objectsPath,
    'objects:\n  - id: gate1\n    label: Gate 1\n    kind: simulated\n    pulse_ms: 0\n' +
      `clock:\n  check: none\ntelemetry:\n  interval_s: ${TELEMETRY_S}\n`,
  );
  const configPath = join(dataDir, 'device', 'device.yaml');
  const { response } = await provision({
    cloud: cloud.baseUrl.replace('localhost', '127.0.0.1'),
    code: created.provisioning_code,
    configPath,
    objectsFrom: objectsPath,
  });
  const barrier = await pairDevice(cloud.ctx, {
    customerId: customer.id,
    pairingCode: response.pairing_code!,
  });
  const config = parse(readFileSync(configPath, 'utf8')) as {
    mqtt: { url: string; username: string; password: string };
    topic_prefix: string;
    device_id: string;
  };
  const url = new URL(config.mqtt.url);
  url.hostname = '127.0.0.1';
  url.port = String(relayPort);
  config.mqtt.url = url.href.replace(/\/$/, '');
  writeFileSync(configPath, stringify(config));
  const offline = { v: 1, device_id: config.device_id, online: false, at: Date.now() };
  return {
    configPath,
    deviceId: created.device_id,
    numberId: barrier.objects[0]!.number_id,
    bareEnv: {
      BENCH_MQTT_URL: config.mqtt.url,
      BENCH_MQTT_CLIENT_ID: config.device_id,
      BENCH_MQTT_USERNAME: config.mqtt.username,
      BENCH_MQTT_PASSWORD: config.mqtt.password,
      BENCH_MQTT_TOPIC: deviceTopic(config.topic_prefix, config.device_id, 'cmd'),
      BENCH_MQTT_WILL_TOPIC: deviceTopic(config.topic_prefix, config.device_id, 'state'),
      BENCH_MQTT_WILL: JSON.stringify(offline),
    },
  };
}

/** One start: spawn, wait for SUBACK through the relay, let it settle, read memory, stop. */
async function measureStart(
  relay: MqttRelay,
  args: string[],
  env: Record<string, string>,
  dataDir: string,
): Promise<Start> {
  const times = relay.nextConnection();
  const child = new MeasuredProcess(args, { env, memoryFile: join(dataDir, 'memory.json') });
  try {
    const seen = await child.connected(times);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const memory = await child.memory();
    return {
      connect: seen.connect - child.spawnedAt,
      connack: seen.connack - child.spawnedAt,
      suback: seen.suback - child.spawnedAt,
      memory,
    };
  } finally {
    await child.stop();
  }
}

function brief(start: Start): string {
  return `connected ${start.connack.toFixed(0)} ms, RSS ${start.memory.rss.toFixed(1)} MB`;
}

function report(daemon: Start[], bare: Start[]): void {
  const rows: [string, (start: Start) => number | null, string, string][] = [
    ['spawn to CONNECT sent', (s) => s.connect, 'ms', ''],
    ['spawn to CONNACK (connected)', (s) => s.connack, 'ms', 'target <= 1.2x'],
    ['spawn to SUBACK (takes commands)', (s) => s.suback, 'ms', ''],
    ['RSS once connected', (s) => s.memory.rss, 'MB', 'target <= 1.25x'],
    ['heap + external once connected', (s) => s.memory.heapAndExternal, 'MB', ''],
  ];
  console.log(`${''.padEnd(34)}${'daemon'.padStart(10)}${'bare'.padStart(10)}${'ratio'.padStart(9)}`);
  for (const [name, figure, unit, target] of rows) {
    const ours = median(daemon.map(figure));
    const theirs = median(bare.map(figure));
    console.log(
      `${name.padEnd(34)}${`${ours.toFixed(1)} ${unit}`.padStart(10)}${`${theirs.toFixed(1)} ${unit}`.padStart(10)}${`${(ours / theirs).toFixed(2)}x`.padStart(9)}  ${target}`,
    );
  }
}

/**
 * The daemon (with --expose-gc, so that its heap is read after a full collection) takes COMMANDS openings sent
 * through the cloud's dispatcher, one after another at RATE a second, with telemetry every TELEMETRY_S seconds;
 * its memory is read every tenth of the way. Reports the growth from the first reading (after 100 commands of
 * warm-up) to the last, and the slope over all of them.
 */
async function measureHour(
  cloud: RunningCloud,
  relay: MqttRelay,
  setup: Setup,
  dataDir: string,
): Promise<void> {
  const seconds = COMMANDS / RATE;
  console.log(
    `\nmemory over ${COMMANDS} commands at ${RATE}/s (${seconds.toFixed(0)} s, telemetry every ${TELEMETRY_S} s)`,
  );
  const times = relay.nextConnection();
  const child = new MeasuredProcess([DEVICE_BIN, 'run', '--config', setup.configPath], {
    env: {},
    memoryFile: join(dataDir, 'memory.json'),
    gc: true,
  });
  try {
    await child.connected(times);
    // The cloud marks the controller online once it has read its state.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    let failed = 0;
    const open = async () => {
      const command = cloud.controllerLink.sign({
        commandId: randomUUID(),
        deviceId: setup.deviceId,
        object: 'gate1',
        numberId: setup.numberId,
      });
      const result = await cloud.controllerLink.send(command);
      if (result.kind !== 'acked' || result.ack.outcome !== 'opened') failed++;
    };
    for (let i = 0; i < 100; i++) await open();
    // V8 gives back the young generation that loading grew some seconds after the start (its memory reducer):
    // readings taken before that would show a fall that is no part of the daemon's steady state.
    await new Promise((resolve) => setTimeout(resolve, REDUCER_WAIT_MS));
    const samples: { done: number; memory: Memory }[] = [{ done: 0, memory: await child.memory() }];
    const started = performance.now();
    for (let done = 1; done <= COMMANDS; done++) {
      await open();
      const ahead = started + (done * 1000) / RATE - performance.now();
      if (ahead > 0) await new Promise((resolve) => setTimeout(resolve, ahead));
      if (done % Math.max(1, Math.floor(COMMANDS / 10)) === 0) {
        const memory = await child.memory();
        samples.push({ done, memory });
        console.log(
          `  ${String(done).padStart(6)} commands: RSS ${memory.rss.toFixed(1)} MB, heap + external after GC ${format(memory.heapAndExternal)}`,
        );
      }
    }
    const first = samples[0]!.memory;
    const last = samples.at(-1)!.memory;
    console.log(
      `growth: RSS ${first.rss.toFixed(1)} -> ${last.rss.toFixed(1)} MB (${signed(last.rss - first.rss)} MB, slope ${slope(samples, (m) => m.rss)} MB per 1000 commands)`,
    );
    if (first.heapAndExternal !== null && last.heapAndExternal !== null) {
      console.log(
        `        heap + external after GC ${first.heapAndExternal.toFixed(2)} -> ${last.heapAndExternal.toFixed(2)} MB (${signed(last.heapAndExternal - first.heapAndExternal)} MB, slope ${slope(samples, (m) => m.heapAndExternal)} MB per 1000 commands)  target: no growth`,
      );
    }
    console.log(`commands not acknowledged as opened: ${failed} of ${COMMANDS + 100}`);
  } finally {
    await child.stop();
  }
}

/** Least-squares slope of a memory figure against the commands done, per 1000 commands. */
function slope(
  samples: { done: number; memory: Memory }[],
  figure: (memory: Memory) => number | null,
): string {
  const points = samples.flatMap((s) => {
    const y = figure(s.memory);
    return y === null ? [] : [{ x: s.done / 1000, y }];
  });
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  const num = points.reduce((sum, p) => sum + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((sum, p) => sum + (p.x - mx) ** 2, 0);
  return signed(den === 0 ? 0 : num / den);
}

function median(values: (number | null)[]): number {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  return known.length % 2 === 1
    ? percentile(known, 0.5)
    : (known[known.length / 2 - 1]! + known[known.length / 2]!) / 2;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
}

function format(value: number | null): string {
  return value === null ? 'not reported' : `${value.toFixed(2)} MB`;
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}
