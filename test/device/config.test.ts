import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig, publicObjects } from '../../device/config.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { tempDir } from './fixtures.js';

const commandKey = SigningKey.generate().publicKey.base64;

const validYaml = `
cloud_url: https://gatelink.example.com
device_id: D0123456789
mqtt:
  url: mqtts://gatelink.example.com:8883
  username: D0123456789
  password: not-a-real-password
topic_prefix: gatelink
command_key: ${commandKey}
private_key_file: device-key.pem
state_dir: /var/lib/gatelink
objects:
  - id: gate
    label: Main gate
    kind: relay
    line: 17
  - id: barrier
    label: Car park barrier
    kind: gsm
    number: '+491701234567'
modem:
  path: /dev/serial/by-id/usb-SIMCOM_SIM7600-if02-port0
`;

function problems(source: string, file = '/etc/gatelink/device.yaml'): readonly string[] {
  try {
    parseConfig(source, file);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be refused');
}

const phoneYaml = (object: string) => `
cloud_url: https://gatelink.example.com
device_id: D0123456789
mqtt:
  url: mqtts://gatelink.example.com:8883
  username: D0123456789
  password: not-a-real-password
topic_prefix: gatelink
command_key: ${commandKey}
clock:
  check: none
objects:
  - id: barrier
    label: Car park barrier
    kind: phone
${object}`;

describe('device config: phone objects (docs/design.md section 12.6)', () => {
  it('accepts a phone object with its number alone, without a modem section, and fills the timeouts', () => {
    const config = parseConfig(phoneYaml("    number: '+491701234567'\n"), '/home/termux/device.yaml');
    expect(config.objects[0]).toEqual({
      id: 'barrier',
      label: 'Car park barrier',
      kind: 'phone',
      number: '+491701234567',
      command_timeout_ms: 10_000,
      call_timeout_ms: 45_000,
      poll_ms: 1_000,
    });
    // The cloud learns the number the phone dials, so that its owner can call the gate while it is offline.
    expect(publicObjects(config)).toEqual([
      { id: 'barrier', label: 'Car park barrier', kind: 'phone', gate_number: '+491701234567' },
    ]);
  });

  it('refuses a bad number in one line that names the key and shows an example', () => {
    expect(problems(phoneYaml('    number: call-me\n'))).toEqual([
      'objects[0].number: expected a phone number such as +491701234567 (digits, optional leading +) (got "call-me")',
    ]);
  });

  it('refuses a sensor on a phone object in one line', () => {
    const lines = problems(
      phoneYaml("    number: '+491701234567'\n    sensor:\n      type: gpio\n      line: 22\n"),
    );
    expect(lines).toEqual([
      'objects[0].sensor: expected no sensor: a phone has no GPIO input to read a gate position on',
    ]);
  });

  it('refuses a poll interval out of range in one line', () => {
    expect(problems(phoneYaml("    number: '+491701234567'\n    poll_ms: 5\n"))).toEqual([
      'objects[0].poll_ms: expected the call log polling interval in milliseconds: an integer from 100 to 10000 (got 5)',
    ]);
  });
});

describe('device config', () => {
  it('accepts a complete file, fills the defaults, resolves paths and freezes the result', () => {
    const config = parseConfig(validYaml, '/etc/gatelink/device.yaml');
    expect(config.private_key_file).toBe('/etc/gatelink/device-key.pem');
    expect(config.outbox_dir).toBe('/var/lib/gatelink/outbox');
    expect(config.objects[0]).toMatchObject({
      active_low: true,
      pulse_ms: 800,
      chip: 'auto',
      sysfs_base: 'auto',
    });
    expect(config.modem?.baud_rate).toBe(115200);
    expect(config.clock.check).toBe('timedatectl');
    expect(Object.isFrozen(config.objects[0])).toBe(true);
  });

  it('reads JSON when the file ends in .json', () => {
    const json = JSON.stringify({ ...JSON.parse(JSON.stringify(parseConfig(validYaml, '/x/device.yaml'))) });
    const parsed = JSON.parse(json);
    delete parsed.config_file;
    expect(parseConfig(JSON.stringify(parsed), '/x/device.json').device_id).toBe('D0123456789');
    expect(problems('cloud_url: x', '/x/device.json')[0]).toMatch(/not valid JSON/);
  });

  it('names each bad key on its own line with what it accepts', () => {
    const bad = validYaml
      .replace('line: 17', 'line: seventeen')
      .replace("number: '+491701234567'", 'number: call-me')
      .replace('topic_prefix: gatelink', 'topic_prefix: "a/#"');
    const lines = problems(bad);
    expect(lines).toHaveLength(3);
    expect(lines).toContainEqual(
      expect.stringMatching(/^objects\[0\]\.line: expected the GPIO line number.*"seventeen"/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^objects\[1\]\.number: expected a phone number/));
    expect(lines).toContainEqual(expect.stringMatching(/^topic_prefix: expected topic levels/));
  });

  it('says which keys are missing or unknown', () => {
    const lines = problems(validYaml.replace(/^device_id:.*$/m, 'devce_id: D0123456789'));
    expect(lines).toContainEqual(expect.stringMatching(/^device_id: missing; expected the device id/));
    expect(lines).toContainEqual(expect.stringMatching(/unknown key "devce_id"/));
  });

  it('refuses an unknown object kind', () => {
    expect(problems(validYaml.replace('kind: relay', 'kind: laser'))).toEqual([
      'objects[0].kind: expected kind: relay, gsm, phone or simulated',
    ]);
  });

  it('refuses a label with a control character, which the cloud would drop from every state', () => {
    expect(problems(validYaml.replace('label: Main gate', 'label: "Main\\tgate"'))).toEqual([
      expect.stringMatching(/^objects\[0\]\.label: expected a label without control characters/),
    ]);
  });

  it('refuses duplicate object ids and a gsm object without a modem', () => {
    const lines = problems(validYaml.replace('id: barrier', 'id: gate').replace(/^modem:\n.*$/m, ''));
    expect(lines).toContainEqual(expect.stringMatching(/^objects\[1\]\.id: expected a unique object id/));
    expect(lines).toContainEqual(expect.stringMatching(/^modem: expected a modem section/));
  });

  it('refuses a command key that is not an Ed25519 public key, without echoing secrets', () => {
    const lines = problems(
      validYaml.replace(commandKey, 'AAAA').replace('password: not-a-real-password', 'password: ""'),
    );
    expect(lines).toContainEqual(
      'command_key: expected the cloud command public key: 32 bytes in standard base64',
    );
    expect(lines.join('\n')).not.toContain('AAAA');
  });

  describe('position sensors', () => {
    const withSensor = (object: 0 | 1, sensor: string) => {
      const at = object === 0 ? '    line: 17\n' : "    number: '+491701234567'\n";
      return validYaml.replace(at, `${at}    sensor:\n${sensor.replace(/^/gm, '      ')}\n`);
    };

    it('fills the defaults of a GPIO sensor, and the state says which objects have one', () => {
      const config = parseConfig(withSensor(1, 'type: gpio\nline: 22'), '/etc/gatelink/device.yaml');
      expect(config.objects[1]?.sensor).toEqual({
        type: 'gpio',
        line: 22,
        chip: 'auto',
        sysfs_base: 'auto',
        active_low: false,
        closed_when: 'active',
        debounce_ms: 50,
      });
      expect(config.objects[0]?.sensor).toBeUndefined();
      expect(publicObjects(config)).toEqual([
        { id: 'gate', label: 'Main gate', kind: 'relay' },
        { id: 'barrier', label: 'Car park barrier', kind: 'gsm', sensor: true },
      ]);
    });

    it("refuses a sensor on a relay's line in one line that says what to do", () => {
      expect(problems(withSensor(1, 'type: gpio\nline: 17'))).toEqual([
        'objects[1].sensor.line: expected a line that no relay uses; line 17 is the relay of objects[0]: wire the sensor to a free GPIO input',
      ]);
    });

    it('refuses two sensors on one line, a bad debounce and a bad closed_when', () => {
      const twice = withSensor(0, 'type: gpio\nline: 22').replace(
        "    number: '+491701234567'\n",
        "    number: '+491701234567'\n    sensor:\n      type: gpio\n      line: 22\n      debounce_ms: 5000\n      closed_when: shut\n",
      );
      expect(problems(twice)).toEqual([
        'objects[1].sensor.closed_when: expected active (the switch is made when the gate is shut) or inactive (got "shut")',
        'objects[1].sensor.debounce_ms: expected the debounce time in milliseconds: an integer from 0 to 2000 (got 5000)',
      ]);
      const fixed = twice.replace('      debounce_ms: 5000\n      closed_when: shut\n', '');
      expect(problems(fixed)).toEqual([
        'objects[1].sensor.line: expected a line that no other sensor uses; line 22 is also the sensor of objects[0]',
      ]);
    });

    it('refuses a simulated sensor on a relay, and a GPIO one on a simulated object', () => {
      expect(problems(withSensor(0, 'type: simulated'))).toEqual([
        'objects[0].sensor.type: expected type: gpio (a relay or gsm object reads its gate on a GPIO input)',
      ]);
      const simulated = validYaml.replace(
        '    kind: relay\n    line: 17\n',
        '    kind: simulated\n    sensor:\n      type: gpio\n      line: 4\n',
      );
      expect(problems(simulated)).toEqual([
        'objects[0].sensor.type: expected type: simulated (a simulated object has a simulated sensor)',
      ]);
    });

    it('fills the defaults of a simulated sensor', () => {
      const simulated = validYaml.replace(
        '    kind: relay\n    line: 17\n',
        '    kind: simulated\n    sensor:\n      type: simulated\n      stuck: true\n',
      );
      expect(parseConfig(simulated, '/etc/gatelink/device.yaml').objects[0]?.sensor).toEqual({
        type: 'simulated',
        open_after_ms: 1500,
        mode: 'auto-close',
        close_after_ms: 20_000,
        stuck: true,
      });
    });
  });

  it('accepts the example config shipped for installers', () => {
    const config = loadConfig(join(import.meta.dirname, '../../hardware/device.example.yaml'));
    expect(config.objects.map((o) => o.kind)).toEqual(['relay', 'gsm']);
  });

  describe('from a file', () => {
    let dir: string;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ dir, cleanup } = await tempDir()));
    afterEach(() => cleanup());

    it('says what to do when the file is missing', () => {
      expect(() => loadConfig(join(dir, 'missing.yaml'))).toThrow(/run gatelink-device provision first/);
    });

    it('loads a YAML file', async () => {
      await writeFile(join(dir, 'device.yml'), validYaml);
      expect(loadConfig(join(dir, 'device.yml')).private_key_file).toBe(join(dir, 'device-key.pem'));
    });
  });
});
