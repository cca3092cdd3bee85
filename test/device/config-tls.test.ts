import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, type DeviceConfigInput, validateConfig } from '../../device/config.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { DEVICE_ID, tempDir } from './fixtures.js';

/** The config's rules for the broker link (docs/design.md section 9): TLS off the board, a usable CA file. */
const commandKey = SigningKey.generate().publicKey.base64;

function input(mqtt: Partial<DeviceConfigInput['mqtt']>): DeviceConfigInput {
  return {
    cloud_url: 'https://gatelink.example.com',
    device_id: DEVICE_ID,
    mqtt: { url: 'mqtts://gate.example.com:8883', username: DEVICE_ID, password: 'secret', ...mqtt },
    topic_prefix: 'gatelink',
    command_key: commandKey,
    objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated' }],
  };
}

function problems(raw: DeviceConfigInput, file: string): readonly string[] {
  try {
    validateConfig(raw, file);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('the broker link in the device config', () => {
  let ca: TestCa;
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;

  beforeAll(async () => {
    ca = await makeTestCa();
  });
  afterAll(() => ca.remove());
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, 'device.yaml');
  });
  afterEach(() => cleanup());

  it.each([
    'mqtt://gate.example.com:1883',
    'ws://gate.example.com/mqtt',
    'mqtt://10.0.0.5:1883',
    'mqtt://[fd00::5]:1883',
    'mqtts://node1.example.com:8883,mqtt://node2.example.com:1883',
  ])(
    '[attack:device.plain-mqtt] refuses the plain %s off the board in one line naming the key and what to do',
    (url) => {
      const lines = problems(input({ url }), file);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^mqtt\.url: (mqtt|ws):\/\/.+ sends the broker password and every command in the clear; use mqtts:\/\/ .*or set mqtt\.insecure: true on a trusted network$/,
      );
    },
  );

  it('never shows the password of a refused URL', () => {
    const lines = problems(input({ url: 'mqtt://dev:hunter2@gate.example.com:1883' }), file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('hunter2');
  });

  it('allows plain MQTT off the board with insecure: true', () => {
    const config = validateConfig(input({ url: 'mqtt://gate.example.com:1883', insecure: true }), file);
    expect(config.mqtt.insecure).toBe(true);
  });

  it.each([
    'mqtt://127.0.0.1:1883',
    'mqtt://127.8.9.10:1883',
    'mqtt://localhost:1883',
    'mqtt://LOCALHOST:1883',
    'ws://[::1]:8080/mqtt',
    'mqtt://127.0.0.1:1883,mqtt://localhost:1884',
  ])('allows plain %s on the board itself', (url) => {
    const config = validateConfig(input({ url }), file);
    expect(config.mqtt.insecure).toBe(false);
  });

  it('resolves ca_file against the config folder and accepts a bundle', async () => {
    const other = await makeTestCa('Another CA');
    await writeFile(join(dir, 'bundle.pem'), `${other.cert}\n${ca.cert}`);
    other.remove();
    const config = validateConfig(input({ ca_file: 'bundle.pem' }), file);
    expect(config.mqtt.ca_file).toBe(join(dir, 'bundle.pem'));
  });

  it('refuses a ca_file that is missing, in one line', () => {
    const lines = problems(input({ ca_file: 'missing.pem' }), file);
    expect(lines).toEqual([
      `mqtt.ca_file: ${join(dir, 'missing.pem')} cannot be used: the file does not exist; give the PEM certificate of the CA that signed the broker's certificate`,
    ]);
  });

  it.each([
    ['text that is no certificate', 'not a certificate\n', /holds no PEM certificate/],
    [
      'a private key',
      '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n',
      /holds no PEM certificate/,
    ],
    [
      'a broken certificate',
      '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n',
      /certificate 1 of the file cannot be read/,
    ],
  ])('refuses a ca_file holding %s, in one line', async (_what, text, reason) => {
    await writeFile(join(dir, 'ca.pem'), text);
    const lines = problems(input({ ca_file: 'ca.pem' }), file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mqtt\.ca_file: \S+ca\.pem cannot be used: /);
    expect(lines[0]).toMatch(reason);
  });
});
