import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DeviceConfig, type DeviceConfigInput, validateConfig } from '../../device/config.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Command, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signCommand } from '../../shared/protocol/signing.js';

export const DEVICE_ID = 'D0123456789';
export const OTHER_DEVICE_ID = 'D9876543210';

/** A temporary folder, removed by the returned cleanup. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'gatelink-device-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The cloud's command key and the device's key, both real Ed25519 keys. */
export function keys() {
  return { cloud: SigningKey.generate(), device: SigningKey.generate() };
}

/** A valid config in `dir`, with the device key written there (mode 0600); `patch` overrides top-level keys. */
export async function makeConfig(
  dir: string,
  options: { cloudKey: SigningKey; deviceKey: SigningKey; patch?: Partial<DeviceConfigInput> },
): Promise<DeviceConfig> {
  const keyFile = join(dir, 'device-key.pem');
  await writeFile(keyFile, options.deviceKey.toPem(), { mode: 0o600 });
  const input: DeviceConfigInput = {
    cloud_url: 'http://127.0.0.1:1',
    device_id: DEVICE_ID,
    mqtt: { url: 'mqtt://127.0.0.1:1', username: DEVICE_ID, password: 'secret' },
    topic_prefix: 'test',
    command_key: options.cloudKey.publicKey.base64,
    private_key_file: keyFile,
    state_dir: join(dir, 'state'),
    objects: [
      { id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 },
      { id: 'garage', label: 'Garage', kind: 'simulated', pulse_ms: 0 },
    ],
    clock: { check: 'none', interval_s: 30 },
    ...options.patch,
  };
  return validateConfig(input, join(dir, 'device.yaml'));
}

/** A command signed with `key`, valid for 5 s from `now`; `patch` changes fields before signing. */
export function command(key: SigningKey, now: number, patch: Partial<Omit<Command, 'sig'>> = {}): Command {
  return signCommand(key, {
    v: PROTOCOL_VERSION,
    id: randomUUID(),
    device_id: DEVICE_ID,
    object: 'gate',
    number_id: 1,
    action: 'open',
    issued_at: now,
    expires_at: now + 5000,
    ...patch,
  });
}

/** A clock the test moves by hand. */
export function fakeClock(start = Date.UTC(2025, 0, 1)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A promise with its resolve function, for drivers that a test releases by hand. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
