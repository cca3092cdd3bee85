import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { hashDevicePassword, newDevicePassword } from '../../cloud/rules/devices/credentials.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { newDeviceId } from '../support/fake-device.js';
import { collector, settledMemory } from './memory.js';
import { startPlainBroker } from './mqtt-baseline.js';
import { ClientsProcess, type DeviceLogin } from './mqtt-clients.js';

/**
 * Idle controllers at the limit of one process (docs/design.md section 7.3): memory of the cloud per idle
 * connected controller on the embedded broker, and how fast they connect. The controllers are mqtt.js clients
 * in several child processes, each from its own loopback source address (127.0.0.x), so only the broker's side
 * is counted: each authenticates as its device, leaves its will, subscribes to its `cmd` and publishes its
 * retained `state`, as device/runtime/session.ts does, then stays idle. Baseline in the same run: the same
 * connections to a bare aedes without authentication or any cloud code. Targets: under 10 KiB of heap and
 * external memory and under 14 KiB of RSS per device, connecting at least as fast as the bare aedes.
 *
 * This machine allows 20,000 open files per process, so 19,000 devices by default; BENCH_IDLE_DEVICES,
 * BENCH_IDLE_PROCESSES and BENCH_IDLE_SECONDS (the time allowed for connecting them all) change the run.
 */
const DEVICES = fromEnv('BENCH_IDLE_DEVICES', 19_000);
const PROCESSES = fromEnv('BENCH_IDLE_PROCESSES', 4);
const CONNECT_SECONDS = fromEnv('BENCH_IDLE_SECONDS', 600);
const PREFIX = 'gatelink';
/**
 * Devices connected and disconnected before measuring, so that what the first connections cost once (code
 * compiled on first use, caches) is not counted per device.
 */
const WARM_UP = 200;

function fromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1)
    throw new Error(`${name} must be a whole number above 0, not ${value}`);
  return number;
}

interface Measured {
  heap: number;
  external: number;
  rss: number;
  /** Devices connected per second, counted until the last one's `state` was accepted. */
  perSecond: number;
}

export async function benchIdleDevices(postgres: string | undefined): Promise<void> {
  const gc = collector();
  console.log(
    `\n## idle devices (embedded broker, ${DEVICES} devices from ${PROCESSES} processes on 127.0.0.x)`,
  );
  const all = Array.from({ length: WARM_UP + DEVICES }, () => ({
    id: newDeviceId(),
    password: newDevicePassword(),
  }));
  const warmUp = all.slice(0, WARM_UP);
  const logins = all.slice(WARM_UP);

  const bare = await startPlainBroker();
  let base: Measured;
  try {
    await connectAndLeave(bare.url, warmUp);
    base = await connectedMemory(gc, bare.url, logins, 'baseline: bare aedes', async () => undefined);
  } finally {
    await bare.close();
  }

  for (const [name, serverUrl] of [
    ['PGlite', undefined],
    ['PostgreSQL', postgres],
  ] as const) {
    if (name === 'PostgreSQL' && !serverUrl) {
      console.log('(idle on PostgreSQL: not reachable, skipped)');
      continue;
    }
    const ours = await cloudMemory(gc, serverUrl, all, warmUp, logins, `cloud on ${name}`);
    console.log(formatMemory('baseline: bare aedes, no auth', base));
    console.log(formatMemory(`cloud: embedded broker, ${name}`, ours));
    const kib = (bytes: number) => (bytes / 1024).toFixed(1);
    console.log(
      `per idle device: heap + external ${kib(ours.heap + ours.external)} KiB (target < 10 KiB, bare aedes ${kib(base.heap + base.external)} KiB)  rss ${kib(ours.rss)} KiB (target < 14 KiB, bare aedes ${kib(base.rss)} KiB)`,
    );
    console.log(
      `connecting: ${ours.perSecond.toFixed(0)}/s beside bare aedes ${base.perSecond.toFixed(0)}/s, ratio ${(ours.perSecond / base.perSecond).toFixed(2)}x (target >= 1x)`,
    );
  }
}

/**
 * The cloud's side, on PGlite (`serverUrl` undefined: the embedded database grows in this process's memory as
 * the states are written, and is counted) or on a PostgreSQL server (a fresh database on it).
 */
async function cloudMemory(
  gc: () => void,
  serverUrl: string | undefined,
  all: DeviceLogin[],
  warmUp: DeviceLogin[],
  logins: DeviceLogin[],
  label: string,
): Promise<Measured> {
  const database = await createTestDatabase(serverUrl);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  let cloud: RunningCloud | undefined;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir, { MQTT_TOPIC_PREFIX: PREFIX }),
      database,
      jobs: false,
    });
    await insertDevices(cloud, all);
    const running = cloud;
    await connectAndLeave(running.controllerLink.deviceUrl, warmUp);
    return await connectedMemory(gc, running.controllerLink.deviceUrl, logins, label, () =>
      waitUntilOnline(running, logins),
    );
  } finally {
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The devices' rows as provisioning leaves them: a broker password hash and a real public key. */
async function insertDevices(cloud: RunningCloud, logins: DeviceLogin[]): Promise<void> {
  process.stdout.write(`creating ${logins.length} devices...`);
  const now = new Date();
  for (let i = 0; i < logins.length; i += 250) {
    await cloud.ctx.db
      .insertInto('devices')
      .values(
        logins.slice(i, i + 250).map((login) => ({
          id: login.id,
          label: `Bench ${login.id}`,
          public_key: SigningKey.generate().publicKey.base64,
          mqtt_password_hash: hashDevicePassword(login.password),
          provisioned_at: now,
          created_at: now,
        })),
      )
      .execute();
  }
  console.log(' done');
}

/**
 * Memory before and after `logins` connect to `url` from PROCESSES child processes (and `settled` says the
 * broker's side is done with them), per connection, in bytes, and the rate they connected at. The clients
 * disconnect afterwards.
 */
async function connectedMemory(
  gc: () => void,
  url: string,
  logins: DeviceLogin[],
  label: string,
  settled: () => Promise<void>,
): Promise<Measured> {
  const processes = clientProcesses(url, logins.length);
  try {
    await Promise.all(processes.map((clients) => clients.waitFor('ready', 30_000)));
    const before = await settledMemory(gc);
    process.stdout.write(`${label}: connecting ${logins.length} devices...`);
    const started = performance.now();
    let connected = 0;
    await Promise.all(
      processes.map(async (clients, p) => {
        let counted = 0;
        clients.send({
          type: 'devices',
          prefix: PREFIX,
          devices: logins.filter((_, i) => i % processes.length === p),
        });
        const done = await clients.waitFor('connected', CONNECT_SECONDS * 1000, (message) => {
          if (message.type !== 'progress') return;
          connected += message.connected - counted;
          counted = message.connected;
          process.stdout.write(` ${connected}`);
        });
        connected += done.connected - counted;
      }),
    );
    await settled();
    const seconds = (performance.now() - started) / 1000;
    console.log(` ${connected} in ${seconds.toFixed(1)} s, idle`);
    // Idle for a moment: whatever the connections left to do (acks, state handling) is done.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await settledMemory(gc);
    return {
      heap: (after.heapUsed - before.heapUsed) / logins.length,
      external: (after.external - before.external) / logins.length,
      rss: (after.rss - before.rss) / logins.length,
      perSecond: logins.length / seconds,
    };
  } finally {
    await Promise.all(processes.map((clients) => clients.stop()));
  }
}

/** Client processes, each connecting from its own loopback address: 127.0.0.2, 127.0.0.3 and so on. */
function clientProcesses(url: string, devices: number): ClientsProcess[] {
  const count = Math.min(PROCESSES, devices);
  return Array.from({ length: count }, (_, p) => new ClientsProcess('devices', url, `127.0.0.${p + 2}`));
}

async function connectAndLeave(url: string, logins: DeviceLogin[]): Promise<void> {
  const processes = clientProcesses(url, logins.length);
  try {
    await Promise.all(
      processes.map(async (clients, p) => {
        await clients.waitFor('ready', 30_000);
        clients.send({
          type: 'devices',
          prefix: PREFIX,
          devices: logins.filter((_, i) => i % processes.length === p),
        });
        await clients.waitFor('connected', 60_000);
      }),
    );
  } finally {
    await Promise.all(processes.map((clients) => clients.stop()));
  }
}

/** The cloud has handled every device's `state`: all their rows online (at most 60 s). */
async function waitUntilOnline(cloud: RunningCloud, logins: DeviceLogin[]): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const row = await cloud.ctx.db
      .selectFrom('devices')
      .select(sql<number>`count(*)::int`.as('online'))
      .where('online', '=', true)
      .executeTakeFirstOrThrow();
    // The warm-up's devices left before: every device online is one of these.
    if (row.online >= logins.length) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the cloud did not see all ${logins.length} devices online within 60 s`);
}

function formatMemory(name: string, memory: Measured): string {
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1).padStart(6)} KiB`;
  return `${name.padEnd(34)} heap ${kib(memory.heap)}  external ${kib(memory.external)}  rss ${kib(memory.rss)}  per connection, ${memory.perSecond.toFixed(0)} connects/s`;
}
