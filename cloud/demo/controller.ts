import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import type { AssembledContext } from '../context.js';

/**
 * The demo's controller is the real `gatelink-device` program with simulated outputs, run as its own
 * process, exactly as an installer would run it on a box: provisioned with a one-time code, then started.
 */
const DEVICE_BIN = fileURLToPath(new URL('../../bin/gatelink-device.mjs', import.meta.url));

export interface DemoController {
  configPath: string;
  stop(): Promise<void>;
}

/**
 * The demo's two controllers, each with the objects file an installer would write (simulated outputs, no NTP
 * daemon to ask): the demo customer's barrier, already paired, and a spare one that the person trying the demo
 * adds to their own new account with its pairing code.
 */
export interface DemoControllerSpec {
  /** Its folder under the demo's data folder. */
  folder: string;
  label: string;
  objects: { id: string; label: string; sensor?: DemoSensor }[];
}

/**
 * A simulated position sensor (docs/design.md section 12.5), so that the demo shows a gate opening and closing:
 * `auto-close` closes by itself after `close_after_ms`; `toggle` stays open until the next opening, so that a
 * visitor can leave it open past the barrier's limit and see the alert.
 */
export type DemoSensor = (
  | { mode: 'auto-close'; open_after_ms: number; close_after_ms: number }
  | { mode: 'toggle'; open_after_ms: number }
) & {
  /** A gate that never moves, whatever the relay does: the journal then says "relay fired, gate did not move". */
  stuck?: boolean;
};

export const DEMO_BARRIER: DemoControllerSpec = {
  folder: 'device',
  label: 'Demo barrier',
  objects: [
    {
      id: 'gate',
      label: 'Main gate',
      sensor: { mode: 'auto-close', open_after_ms: 1500, close_after_ms: 20_000 },
    },
    // A garage door opens with one press and closes with the next: it stays open until opened again.
    { id: 'garage', label: 'Garage door', sensor: { mode: 'toggle', open_after_ms: 1500 } },
  ],
};

export const SPARE_BARRIER: DemoControllerSpec = {
  folder: 'spare-device',
  label: 'Demo controller for your account',
  // The visitor's own barrier shows every story a sensor tells: a gate that closes by itself, one stuck, and a
  // door left open until opened again.
  objects: [
    {
      id: 'front',
      label: 'Front gate',
      sensor: { mode: 'auto-close', open_after_ms: 1500, close_after_ms: 20_000 },
    },
    {
      id: 'side',
      label: 'Side gate (stuck)',
      sensor: { mode: 'auto-close', open_after_ms: 1500, close_after_ms: 20_000, stuck: true },
    },
    { id: 'garage', label: 'Garage door', sensor: { mode: 'toggle', open_after_ms: 1500 } },
  ],
};

/** The objects file an installer would write for a demo controller (exported for its test). */
export function objectsYaml(spec: DemoControllerSpec): string {
  const objects = spec.objects
    .map(
      (object) =>
        `  - id: ${object.id}\n    label: ${object.label}\n    kind: simulated\n    pulse_ms: 300\n${sensorYaml(object.sensor)}`,
    )
    .join('');
  return `# ${spec.label}: simulated outputs and gate sensors (no relay board, modem or switch attached)\nobjects:\n${objects}clock:\n  check: none\ntelemetry:\n  interval_s: 30\n`;
}

function sensorYaml(sensor: DemoSensor | undefined): string {
  if (!sensor) return '';
  const lines = [`type: simulated`, `mode: ${sensor.mode}`, `open_after_ms: ${sensor.open_after_ms}`];
  if (sensor.mode === 'auto-close') lines.push(`close_after_ms: ${sensor.close_after_ms}`);
  if (sensor.stuck) lines.push('stuck: true');
  return `    sensor:\n${lines.map((line) => `      ${line}\n`).join('')}`;
}

export function demoDeviceFolder(dataDir: string, spec: DemoControllerSpec = DEMO_BARRIER): string {
  return join(dataDir, 'demo', spec.folder);
}

/** Provisions a demo controller with `gatelink-device provision` (once: the code works once). */
export async function provisionDemoController(
  dataDir: string,
  cloudUrl: string,
  code: string,
  spec: DemoControllerSpec = DEMO_BARRIER,
): Promise<string> {
  const folder = demoDeviceFolder(dataDir, spec);
  mkdirSync(folder, { recursive: true });
  const objectsPath = join(folder, 'objects.yaml');
  writeFileSync(objectsPath, objectsYaml(spec));
  const configPath = join(folder, 'device.yaml');
  await runToEnd(
    ['provision', '--cloud', cloudUrl, '--code', code, '--config', configPath, '--objects-from', objectsPath],
    join(folder, 'provision.log'),
  );
  return configPath;
}

/**
 * Where the demo's own controllers, on this machine, reach the cloud and its broker: the listening addresses,
 * not BASE_URL's, which may name a proxy or tunnel this machine cannot use (docs/design.md section 8).
 */
export interface DemoAddresses {
  cloud: string;
  broker: string;
}

/**
 * Starts `gatelink-device run` and waits until the cloud sees the controller online. The demo's controllers are
 * its own: started again with another PORT or MQTT_PORT, the demo points their configs at the cloud's and the
 * broker's addresses of this start, where an installer would provision again (docs/design.md section 8).
 */
export async function startDemoController(
  ctx: AssembledContext,
  dataDir: string,
  deviceId: string,
  spec: DemoControllerSpec,
  addresses: DemoAddresses,
): Promise<DemoController> {
  const folder = demoDeviceFolder(dataDir, spec);
  const configPath = join(folder, 'device.yaml');
  if (!existsSync(configPath)) {
    throw new Error(
      `the demo controller's config ${configPath} is missing; restore it, or start the demo with another GATELINK_DATA_DIR`,
    );
  }
  pointAt(configPath, addresses.cloud, addresses.broker);
  const log = createWriteStream(join(folder, 'device.log'), { flags: 'a' });
  const child = spawn(process.execPath, [DEVICE_BIN, 'run', '--config', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const online = await waitUntilOnline(ctx, deviceId, exited);
  if (!online) {
    child.kill('SIGTERM');
    throw new Error(`the demo controller did not come online; see ${join(folder, 'device.log')}`);
  }
  return {
    configPath,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      log.end();
    },
  };
}

/** Sets the config's cloud and broker addresses, keeping everything else (and its comments) as written. */
function pointAt(configPath: string, cloudUrl: string, brokerUrl: string): void {
  const document = parseDocument(readFileSync(configPath, 'utf8'));
  if (document.get('cloud_url') === cloudUrl && document.getIn(['mqtt', 'url']) === brokerUrl) return;
  document.set('cloud_url', cloudUrl);
  document.setIn(['mqtt', 'url'], brokerUrl);
  const next = `${configPath}.new`;
  writeFileSync(next, document.toString(), { mode: 0o600 });
  renameSync(next, configPath);
}

async function waitUntilOnline(
  ctx: AssembledContext,
  deviceId: string,
  exited: Promise<unknown>,
): Promise<boolean> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (let i = 0; i < 150 && !gone; i++) {
    const device = await ctx.db
      .selectFrom('devices')
      .select('online')
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (device?.online) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

function runToEnd(args: string[], logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(process.execPath, [DEVICE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    child.once('error', reject);
    child.once('exit', (code) => {
      log.end();
      if (code === 0) resolve();
      else reject(new Error(`gatelink-device ${args[0]} failed (exit ${code}); see ${logFile}`));
    });
  });
}
