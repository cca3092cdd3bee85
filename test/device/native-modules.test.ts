import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ObjectConfig } from '../../device/config.js';
import { DEVICE_ID, keys, tempDir } from './fixtures.js';

/**
 * The native packages (onoff for the relays, serialport for the modem) are loaded only by the driver that needs
 * them (docs/design.md section 12.1): a controller with simulated objects, or with relays only, must start on a
 * board where the others are missing or broken. The compiled daemon runs with a module hook that refuses to
 * resolve them; the same hook makes a relay config fail with the driver's own error, which shows that it works.
 */
const DEVICE_BIN = fileURLToPath(new URL('../../bin/gatelink-device.mjs', import.meta.url));
const NATIVE = String.raw`/^(onoff|epoll|serialport|@serialport\/[^/]+)(\/|$)/`;
const RESOLVE = `export async function resolve(specifier, context, next) {
  if (${NATIVE}.test(specifier)) throw new Error('native package ' + specifier + ' refused by the test');
  return next(specifier, context);
}`;
const REGISTER = `import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(RESOLVE)}`)});`;
const HOOK = `data:text/javascript,${encodeURIComponent(REGISTER)}`;

const SIMULATED: ObjectConfig[] = [
  { id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 },
  { id: 'garage', label: 'Garage', kind: 'simulated', pulse_ms: 0 },
];

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});

afterEach(async () => {
  await cleanup();
});

/** A config file in `dir` with these objects; the broker is a closed port, so `run` keeps retrying. */
async function configFile(objects: readonly Record<string, unknown>[]): Promise<string> {
  const { cloud, device } = keys();
  const keyFile = join(dir, 'device-key.pem');
  await writeFile(keyFile, device.toPem(), { mode: 0o600 });
  const path = join(dir, 'device.yaml');
  const config = {
    cloud_url: 'http://127.0.0.1:1',
    device_id: DEVICE_ID,
    mqtt: { url: 'mqtt://127.0.0.1:1', username: DEVICE_ID, password: 'secret' },
    topic_prefix: 'test',
    command_key: cloud.publicKey.base64,
    private_key_file: keyFile,
    state_dir: join(dir, 'state'),
    objects,
    clock: { check: 'none' },
  };
  await writeFile(path, stringify(config));
  return path;
}

interface Finished {
  code: number | null;
  out: string;
}

function daemon(args: string[]): { child: ChildProcess; finished: Promise<Finished>; output: () => string } {
  const child = spawn(process.execPath, ['--import', HOOK, DEVICE_BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  const finished = new Promise<Finished>((resolve) => child.once('close', (code) => resolve({ code, out })));
  return { child, finished, output: () => out };
}

describe('native packages are loaded only by the driver that needs them', () => {
  it('tests simulated objects with onoff and serialport unavailable', async () => {
    const config = await configFile(SIMULATED);
    const { code, out } = await daemon(['test', '--config', config]).finished;
    expect(out).toContain('All objects opened.');
    expect(out).not.toContain('refused by the test');
    expect(code).toBe(0);
  });

  it('runs the daemon on simulated objects with onoff and serialport unavailable, and stops it', async () => {
    const config = await configFile(SIMULATED);
    const run = daemon(['run', '--config', config]);
    for (let i = 0; i < 600 && !run.output().includes('gatelink-device: running as'); i++) {
      if (run.child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    run.child.kill('SIGTERM');
    const { code, out } = await run.finished;
    expect(out).toContain(`gatelink-device: running as ${DEVICE_ID} with 2 object(s)`);
    expect(out).toContain('stopped, outputs released');
    expect(out).not.toContain('refused by the test');
    expect(code).toBe(0);
  });

  it('makes a relay fail with the driver’s error, so the hook is in force', async () => {
    const config = await configFile([
      { id: 'gate', label: 'Main gate', kind: 'relay', line: 17, sysfs_base: 0, pulse_ms: 0 },
    ]);
    const { code, out } = await daemon(['test', '--config', config]).finished;
    expect(out).toContain('cannot use GPIO: native package onoff refused by the test');
    expect(code).not.toBe(0);
  });
});
