import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asCliError } from '../../device/cli/cli-error.js';
import { nextSteps } from '../../device/cli/next-steps.js';
import { provision } from '../../device/cli/provision.js';
import { statusCommand } from '../../device/cli/status.js';
import { testCommand } from '../../device/cli/test.js';
import { loadConfig } from '../../device/config.js';
import { ClockMonitor, clockAdvice } from '../../device/runtime/clock.js';
import { StatusFile } from '../../device/runtime/status.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { DEVICE_ID, keys, tempDir } from './fixtures.js';
import { configJson, fakeCloud } from './provision-fixtures.js';

/**
 * What tripped up a new installer (hardware/README.md): provisioning that wrote outside the folder it was given,
 * next steps for a config that systemd does not read, a stack trace for a machine without GPIO, and a clock
 * refusal that did not say what to do.
 */
const EXAMPLE = resolve('hardware/device.example.yaml');
const BIN = resolve('bin/gatelink-device.mjs');

/** Every file below `dir`, relative to it. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('provisioning into a folder of its own', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloud: Awaited<ReturnType<typeof fakeCloud>>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    cloud = await fakeCloud(SigningKey.generate());
  });
  afterEach(async () => {
    await cloud.close();
    await cleanup();
  });

  it('with the shipped example, writes the key and the config there and nothing in /etc/gatelink', async () => {
    const etcBefore = existsSync('/etc/gatelink');
    const folder = join(dir, 'try');
    const configPath = join(folder, 'device.yaml');
    await provision({ cloud: cloud.url, code: 'GOOD-CODE', configPath, objectsFrom: EXAMPLE });
    expect(filesBelow(dir)).toEqual(['try/device-key.pem', 'try/device.yaml']);
    expect(existsSync('/etc/gatelink')).toBe(etcBefore);
    const config = loadConfig(configPath);
    expect(config.private_key_file).toBe(join(folder, 'device-key.pem'));
    expect(config.state_dir).toBe(join(folder, 'state'));
  });

  it('reads relative paths in the objects file as relative to that file', async () => {
    const objects = join(dir, 'objects', 'objects.yaml');
    await mkdir(join(dir, 'objects'));
    await writeFile(
      objects,
      'objects:\n  - {id: gate, label: Gate, kind: simulated}\nstate_dir: ../site/state\nclock: {check: none}\n',
    );
    const configPath = join(dir, 'site', 'device.yaml');
    await provision({ cloud: cloud.url, code: 'GOOD-CODE', configPath, objectsFrom: objects });
    expect(loadConfig(configPath).state_dir).toBe(join(dir, 'site', 'state'));
  });

  it('refuses a key file outside the folder before spending the code, and writes nothing', async () => {
    const objects = join(dir, 'objects.yaml');
    await writeFile(
      objects,
      'objects:\n  - {id: gate, label: Gate, kind: simulated}\nprivate_key_file: /etc/gatelink/device-key.pem\n',
    );
    const attempt = provision({
      cloud: cloud.url,
      code: 'GOOD-CODE',
      configPath: join(dir, 'site', 'device.yaml'),
      objectsFrom: objects,
    });
    await expect(attempt).rejects.toThrow(/outside .*site, and provision writes only in the config's folder/);
    expect(cloud.requests).toHaveLength(0);
    expect(filesBelow(dir)).toEqual(['objects.yaml']);
  });
});

describe('the next steps after provisioning', () => {
  it('for /etc/gatelink/device.yaml, are the systemd unit that reads it', () => {
    const text = nextSteps('/etc/gatelink/device.yaml', {}).join('\n');
    expect(text).toContain('sudo systemctl enable --now gatelink-device');
    expect(text).toContain('gatelink-device test');
  });

  it('for any other folder, run that config, as the installer ran the command, and how to point systemd at it', () => {
    const text = nextSteps('/home/ann/gatelink try/device.yaml', { npm_lifecycle_event: 'device' }).join(
      '\n',
    );
    expect(text).toContain("npm run device -- run --config '/home/ann/gatelink try/device.yaml'");
    expect(text).toContain("npm run device -- test --config '/home/ann/gatelink try/device.yaml'");
    expect(text).not.toContain('systemctl enable');
    expect(text).toContain('sudo systemctl edit gatelink-device');
    expect(text).toMatch(
      /ExecStart=\n\s+ExecStart=\/usr\/bin\/node .* run --config '\/home\/ann\/gatelink try/,
    );
    expect(nextSteps('/srv/gate/device.yaml', {}).join('\n')).toContain(
      'gatelink-device run --config /srv/gate/',
    );
  });
});

describe('a machine without a GPIO chip', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(() => cleanup());

  async function relayConfig(): Promise<string> {
    const { cloud, device } = keys();
    const file = join(dir, 'device.json');
    await writeFile(
      file,
      await configJson(dir, cloud, device, [{ id: 'gate', label: 'Main gate', kind: 'relay', line: 17 }]),
    );
    return file;
  }

  it('gets one sentence from test: what is missing and to try simulated objects', async () => {
    const attempt = testCommand({
      configPath: await relayConfig(),
      overrides: { sysfsRoot: join(dir, 'no-gpio-here') },
      print: () => undefined,
    });
    const failure = asCliError(
      await attempt.then(
        () => null,
        (error: unknown) => error,
      ),
    );
    expect(failure.code).toBe('no_gpio_chip');
    expect(failure.message).toContain('no GPIO chip');
    expect(failure.message).toContain('kind: simulated');
    expect(failure.message).toContain('Try it on a laptop');
    expect(failure.message).not.toContain('\n');
  });

  // The command as an installer runs it, on a machine that has no GPIO at all (like this one, usually).
  it.skipIf(existsSync('/sys/class/gpio'))('prints no stack trace from the compiled command', async () => {
    const file = await relayConfig();
    const run = promisify(execFile)(process.execPath, [BIN, 'test', '--config', file]);
    const failed = await run.then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed?.stderr).toMatch(/^gatelink-device: this machine has no GPIO chip/);
    expect(failed?.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });
});

describe('a clock that is not synchronised', () => {
  it('is reported with how to check it and fix it', async () => {
    const lines: string[] = [];
    const monitor = new ClockMonitor({
      probe: async () => false,
      advice: clockAdvice('timedatectl'),
      intervalMs: 60_000,
      now: () => 0,
      log: (line) => lines.push(line),
    });
    await monitor.check();
    expect(lines[0]).toContain('commands are refused');
    expect(lines[0]).toContain('timedatectl show -p NTPSynchronized --value');
    expect(lines[0]).toContain('sudo timedatectl set-ntp true');
    expect(lines[0]).toContain('clock: check: none');
    expect(clockAdvice('timesyncd')).toContain('systemd-timesyncd');
  });

  it('says so in gatelink-device status, with the fix', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const { cloud, device } = keys();
      const file = join(dir, 'device.json');
      const config = JSON.parse(await configJson(dir, cloud, device)) as Record<string, unknown>;
      await writeFile(file, JSON.stringify({ ...config, clock: { check: 'timedatectl' } }));
      const now = Date.now();
      const status = new StatusFile({
        stateDir: join(dir, 'state'),
        now: Date.now,
        initial: {
          v: 1,
          running: true,
          pid: process.pid,
          device_id: DEVICE_ID,
          version: '0.1.0',
          started_at: now,
          updated_at: now,
          mqtt: { url: 'mqtt://127.0.0.1:1', connected: true, since: now, last_error: null },
          clock_synced: false,
          signal: null,
          modem: null,
          outbox: 0,
          sensors: [],
          last_command: null,
        },
      });
      await mkdir(join(dir, 'state'));
      await status.write();
      const printed: string[] = [];
      await statusCommand({ configPath: file, json: false, print: (line) => printed.push(line) });
      expect(printed.join('\n')).toMatch(/NOT synchronised: commands are refused; check with: timedatectl/);
    } finally {
      await cleanup();
    }
  });
});
