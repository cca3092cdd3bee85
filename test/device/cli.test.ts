import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeUpdateRecord } from '../../device/boot/home-layout.js';
import { CliError } from '../../device/cli/cli-error.js';
import { provision } from '../../device/cli/provision.js';
import { statusCommand } from '../../device/cli/status.js';
import { testCommand } from '../../device/cli/test.js';
import { loadConfig } from '../../device/config.js';
import { readDeviceKey } from '../../device/keys.js';
import { OUTBOX_LOG } from '../../device/runtime/outbox.js';
import { StatusFile } from '../../device/runtime/status.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { DEVICE_ID, keys, tempDir } from './fixtures.js';
import { configJson, fakeCloud, RELEASE_KEY } from './provision-fixtures.js';

const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;

describe('gatelink-device provision', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloudKey: SigningKey;
  let cloud: Awaited<ReturnType<typeof fakeCloud>>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    cloudKey = SigningKey.generate();
    cloud = await fakeCloud(cloudKey);
    await writeFile(join(dir, 'objects.yaml'), OBJECTS_YAML);
  });
  afterEach(async () => {
    await cloud.close();
    await cleanup();
  });

  it('registers a key made on the device, pins the command key and writes a usable config', async () => {
    const configPath = join(dir, 'etc', 'device.yaml');
    const { response } = await provision({
      cloud: cloud.url,
      code: 'GOOD-CODE',
      configPath,
      objectsFrom: join(dir, 'objects.yaml'),
    });
    expect(response.pairing_code).toBe('K7M2P9QX');
    expect(cloud.requests[0]?.objects).toEqual([{ id: 'gate', label: 'Main gate', kind: 'simulated' }]);

    const config = loadConfig(configPath);
    expect(config).toMatchObject({ device_id: DEVICE_ID, command_key: cloudKey.publicKey.base64 });
    // The release key is pinned beside the command key: updates must be signed by it.
    expect(config.release_key).toBe(RELEASE_KEY.publicKey.base64);
    expect(config.mqtt.password).toBe('broker-secret');
    expect(statSync(config.private_key_file).mode & 0o777).toBe(0o600);
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    expect(readDeviceKey(config.private_key_file).publicKey.base64).toBe(cloud.requests[0]?.public_key);
  });

  it('refuses a used code with the next step, and writes nothing', async () => {
    const configPath = join(dir, 'device.yaml');
    const attempt = provision({
      cloud: cloud.url,
      code: 'USED',
      configPath,
      objectsFrom: join(dir, 'objects.yaml'),
    });
    await expect(attempt).rejects.toThrow(CliError);
    await expect(attempt).rejects.toThrow(/ask the operator for a new one \(gatelink-admin device add\)/);
    expect(existsSync(configPath)).toBe(false);
    expect(existsSync(join(dir, 'device-key.pem'))).toBe(false);
  });

  it('checks the objects before spending the code', async () => {
    await writeFile(join(dir, 'bad.yaml'), OBJECTS_YAML.replace('pulse_ms: 0', 'pulse_ms: -5'));
    const attempt = provision({
      cloud: cloud.url,
      code: 'GOOD-CODE',
      configPath: join(dir, 'device.yaml'),
      objectsFrom: join(dir, 'bad.yaml'),
    });
    await expect(attempt).rejects.toThrow(/objects\[0\]\.pulse_ms/);
    expect(cloud.requests).toHaveLength(0);
  });

  it('says where the cloud could not be reached', async () => {
    await cloud.close();
    const attempt = provision({
      cloud: cloud.url,
      code: 'GOOD-CODE',
      configPath: join(dir, 'device.yaml'),
      objectsFrom: join(dir, 'objects.yaml'),
    });
    await expect(attempt).rejects.toThrow(/cannot reach http:\/\/127\.0\.0\.1:\d+ .*run provision again/);
    cloud = await fakeCloud(cloudKey);
  });

  it('[attack:provisioning.plain-http] refuses plain http to anything but localhost', async () => {
    await expect(
      provision({ cloud: 'http://gatelink.example.com', code: 'X', configPath: join(dir, 'device.yaml') }),
    ).rejects.toThrow(/https/);
  });
});

describe('gatelink-device status and test', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let printed: string[];

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    printed = [];
  });
  afterEach(() => cleanup());

  it('shows connection, clock, last command and outbox from the status file, and the outbox from disk once stopped', async () => {
    const { cloud, device } = keys();
    const configFile = join(dir, 'device.json');
    await writeFile(configFile, await configJson(dir, cloud, device));
    const config = loadConfig(configFile);
    await mkdir(config.state_dir, { recursive: true });
    const now = Date.now();
    const status = new StatusFile({
      stateDir: config.state_dir,
      now: Date.now,
      initial: {
        v: 1,
        running: true,
        pid: process.pid,
        device_id: DEVICE_ID,
        version: '0.1.0',
        started_at: now,
        updated_at: now,
        mqtt: { url: 'mqtts://broker.example.com', connected: true, since: now, last_error: null },
        clock_synced: false,
        signal: null,
        modem: null,
        outbox: 1,
        sensors: [
          { object: 'gate', position: 'open', since: Date.UTC(2026, 0, 2, 3, 4, 5) },
          { object: 'garage', position: 'closed', since: null },
        ],
        last_command: {
          id: 'a3c1f1de-5b7e-4c4c-9a55-0b7a4f1f2a10',
          object: 'gate',
          outcome: 'refused',
          reason: 'clock_unsynced',
          received_at: now,
          finished_at: now,
        },
      },
    });
    await status.write();
    await mkdir(config.outbox_dir, { recursive: true });
    // One left by a previous version (a file each) and one of two in the log (the other was sent).
    await writeFile(join(config.outbox_dir, '000000000000001-000000-x.json'), '{}');
    const ack = (commandId: string) =>
      JSON.stringify(
        signAck(device, {
          v: PROTOCOL_VERSION,
          command_id: commandId,
          device_id: DEVICE_ID,
          outcome: 'opened',
          received_at: now,
          finished_at: now,
        }),
      );
    const [sent, waiting] = [randomUUID(), randomUUID()];
    await writeFile(join(config.outbox_dir, OUTBOX_LOG), `P ${ack(sent)}\nP ${ack(waiting)}\nD ${sent}\n`);

    const code = await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l) });
    const text = printed.join('\n');
    expect(code).toBe(0);
    expect(text).toMatch(/connection\s+connected to mqtts:\/\/broker\.example\.com/);
    expect(text).toMatch(/clock\s+NOT synchronised/);
    expect(text).toMatch(/last command.*gate: refused \(clock_unsynced\)/);
    expect(text).toMatch(/sensor\s+gate: gate open since 2026-01-02 03:04:05 UTC/);
    expect(text).toMatch(
      /sensor\s+garage: gate closed \(since when is known once the clock is synchronised\)/,
    );
    // While the daemon runs, its own count: the record that an acknowledgement went may not be on disk yet.
    expect(text).toMatch(/outbox\s+1 acknowledgement/);

    status.update({ running: false });
    await status.write();
    printed.length = 0;
    expect(await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l) })).toBe(
      1,
    );
    expect(printed.join('\n')).toMatch(/outbox\s+2 acknowledgement/);
  });

  it('says when the daemon has not run yet', async () => {
    const { cloud, device } = keys();
    const configFile = join(dir, 'device.json');
    await writeFile(configFile, await configJson(dir, cloud, device));
    expect(await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l) })).toBe(
      1,
    );
    expect(printed.join('\n')).toMatch(/daemon\s+has not run yet/);
  });

  it('shows the releases of an installed home and why its last update ended as it did', async () => {
    const { cloud, device } = keys();
    const configFile = join(dir, 'device.json');
    await writeFile(configFile, await configJson(dir, cloud, device));
    const home = join(dir, 'home');
    for (const name of ['0.2.0-aaaaaaaaaaaa', '0.3.0-bbbbbbbbbbbb']) {
      await mkdir(join(home, 'releases', name), { recursive: true });
    }
    await symlink('releases/0.2.0-aaaaaaaaaaaa', join(home, 'current'));
    await symlink('releases/0.2.0-aaaaaaaaaaaa', join(home, 'known-good'));
    writeUpdateRecord(home, {
      v: 1,
      phase: 'rolled_back',
      rollout_id: 7,
      version: '0.3.0',
      from: '0.2.0-aaaaaaaaaaaa',
      to: '0.3.0-bbbbbbbbbbbb',
      starts: 3,
      reason: 'crashed',
      detail: 'exited 3 times before it was healthy',
      at: Date.UTC(2026, 10, 26, 21, 0, 0),
    });
    await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l), home });
    const text = printed.join('\n');
    expect(text).toMatch(/release\s+0\.2\.0-aaaaaaaaaaaa$/m);
    expect(text).toContain(
      'update       0.3.0 rolled back at 2026-11-26 21:00:00 UTC (crashed: exited 3 times before it was healthy); 0.2.0-aaaaaaaaaaaa runs (rollout 7)',
    );

    printed.length = 0;
    await statusCommand({ configPath: configFile, json: false, print: (l) => printed.push(l), home: null });
    expect(printed.join('\n')).not.toMatch(/^(release|update) /m);
  });

  it('pulses each object once and reports a failing one', async () => {
    const { cloud, device } = keys();
    const configFile = join(dir, 'device.json');
    await writeFile(
      configFile,
      await configJson(dir, cloud, device, [
        { id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 },
        { id: 'garage', label: 'Garage', kind: 'simulated', pulse_ms: 0, fail: 'relay_fault' },
      ]),
    );
    const code = await testCommand({ configPath: configFile, print: (l) => printed.push(l) });
    expect(code).toBe(1);
    expect(printed).toContainEqual(expect.stringMatching(/^gate \(Main gate\): opened/));
    expect(printed).toContainEqual(expect.stringMatching(/^garage \(Garage\): FAILED relay_fault/));
  });

  it("reads each gate's sensor, and says when the gate was seen moving or that it was not", async () => {
    const { cloud, device } = keys();
    const configFile = join(dir, 'device.json');
    await writeFile(
      configFile,
      await configJson(dir, cloud, device, [
        {
          id: 'gate',
          label: 'Main gate',
          kind: 'simulated',
          pulse_ms: 0,
          sensor: { type: 'simulated', mode: 'toggle', open_after_ms: 10 },
        },
        {
          id: 'side',
          label: 'Side gate',
          kind: 'simulated',
          pulse_ms: 0,
          sensor: { type: 'simulated', mode: 'toggle', open_after_ms: 10, stuck: true },
        },
      ]),
    );
    const code = await testCommand({
      configPath: configFile,
      moveWaitMs: 300,
      print: (l) => printed.push(l),
    });
    expect(code).toBe(1);
    expect(printed).toContain('gate (Main gate): gate closed');
    expect(printed).toContainEqual(
      expect.stringMatching(/^gate \(Main gate\): gate seen open after \d+\.\d s$/),
    );
    expect(printed).toContain('side (Side gate): gate closed');
    expect(printed).toContainEqual(
      expect.stringMatching(
        /^side \(Side gate\): FAILED gate not seen moving within 0\.3 s: check the sensor's wiring/,
      ),
    );
    expect(printed.at(-1)).toBe('1 of 2 object(s) failed.');
  });
});
