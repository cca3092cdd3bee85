import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { hashDevicePassword, newDevicePassword } from '../../cloud/devices/credentials.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { newDeviceId } from '../support/fake-device.js';
import { collector, settledMemory } from './memory.js';
import { startPlainBroker } from './mqtt-baseline.js';
import { ClientsProcess, type DeviceLogin } from './mqtt-clients.js';

/**
 * Memory of the cloud per idle connected controller on the embedded broker (issue target: under 20 KiB).
 * The controllers are mqtt.js clients in a child process, so only the broker's side is counted: each
 * authenticates as its device, leaves its will, subscribes to its `cmd` and publishes its retained `state`,
 * as device/runtime/session.ts does, then stays idle. Baseline in the same run: the same connections to a bare
 * aedes without authentication or any cloud code.
 */
const DEVICES = 1000;
const PREFIX = 'gatelink';
/**
 * Devices connected and disconnected before measuring, so that what the first connections cost once (code
 * compiled on first use, caches) is not counted per device.
 */
const WARM_UP = 100;

interface Memory {
  heap: number;
  external: number;
  rss: number;
}

export async function benchIdleDevices(): Promise<void> {
  const gc = collector();
  console.log(`\n## idle memory per connected device (embedded broker, PGlite, ${DEVICES} devices)`);
  const all = Array.from({ length: WARM_UP + DEVICES }, () => ({
    id: newDeviceId(),
    password: newDevicePassword(),
  }));
  const warmUp = all.slice(0, WARM_UP);
  const logins = all.slice(WARM_UP);

  const bare = await startPlainBroker();
  let base: Memory;
  try {
    await connectAndLeave(bare.url, warmUp);
    base = await connectedMemory(gc, bare.url, logins, 'baseline: bare aedes', async () => undefined);
  } finally {
    await bare.close();
  }

  const database = await createTestDatabase(undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  let cloud: RunningCloud | undefined;
  let ours: Memory;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir, { MQTT_TOPIC_PREFIX: PREFIX }),
      database,
      jobs: false,
    });
    await insertDevices(cloud, all);
    const running = cloud;
    await connectAndLeave(running.broker.deviceUrl, warmUp);
    ours = await connectedMemory(gc, running.broker.deviceUrl, logins, 'cloud: embedded broker', () =>
      waitUntilOnline(running, logins),
    );
  } finally {
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }

  console.log(formatMemory('baseline: bare aedes, no auth', base));
  console.log(formatMemory('cloud: embedded broker', ours));
  const perDevice = (ours.heap + ours.external) / 1024;
  const perConnection = (base.heap + base.external) / 1024;
  console.log(
    `KiB per idle device (heap + external): ${perDevice.toFixed(1)} KiB (target < 20 KiB)  bare aedes ${perConnection.toFixed(1)} KiB  ratio ${(perDevice / perConnection).toFixed(2)}x`,
  );
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
 * Memory before and after `logins` connect to `url` from a child process (and `settled` says the broker's side
 * is done with them), per connection, in bytes. The clients disconnect afterwards.
 */
async function connectedMemory(
  gc: () => void,
  url: string,
  logins: DeviceLogin[],
  label: string,
  settled: () => Promise<void>,
): Promise<Memory> {
  const clients = new ClientsProcess('devices', url);
  try {
    await clients.waitFor('ready', 30_000);
    const before = await settledMemory(gc);
    process.stdout.write(`${label}: connecting ${logins.length} devices...`);
    clients.send({ type: 'devices', prefix: PREFIX, devices: logins });
    await clients.waitFor('connected', 90_000, (message) => {
      if (message.type === 'progress') process.stdout.write(` ${message.connected}`);
    });
    process.stdout.write(` ${logins.length}`);
    await settled();
    console.log(', idle');
    // Idle for a moment: whatever the connections left to do (acks, state handling) is done.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await settledMemory(gc);
    return {
      heap: (after.heapUsed - before.heapUsed) / logins.length,
      external: (after.external - before.external) / logins.length,
      rss: (after.rss - before.rss) / logins.length,
    };
  } finally {
    await clients.stop();
  }
}

async function connectAndLeave(url: string, logins: DeviceLogin[]): Promise<void> {
  const clients = new ClientsProcess('devices', url);
  try {
    await clients.waitFor('ready', 30_000);
    clients.send({ type: 'devices', prefix: PREFIX, devices: logins });
    await clients.waitFor('connected', 60_000);
  } finally {
    await clients.stop();
  }
}

/** The cloud has handled every device's `state`: all their rows online (at most 60 s). */
async function waitUntilOnline(cloud: RunningCloud, logins: DeviceLogin[]): Promise<void> {
  const ids = logins.map((login) => login.id);
  for (let i = 0; i < 600; i++) {
    const row = await cloud.ctx.db
      .selectFrom('devices')
      .select(sql<number>`count(*)::int`.as('online'))
      .where('online', '=', true)
      .where('id', 'in', ids)
      .executeTakeFirstOrThrow();
    if (row.online >= ids.length) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the cloud did not see all ${ids.length} devices online within 60 s`);
}

function formatMemory(name: string, memory: Memory): string {
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1).padStart(6)} KiB`;
  return `${name.padEnd(34)} heap ${kib(memory.heap)}  external ${kib(memory.external)}  rss ${kib(memory.rss)}  per connection`;
}
