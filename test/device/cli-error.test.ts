import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  asCliError,
  CLI_ERRORS,
  CliError,
  type CliErrorCode,
  type CliErrorParams,
  cliError,
} from '../../device/cli/cli-error.js';
import { main } from '../../device/cli/main.js';
import { ConfigError } from '../../device/config.js';
import { KeyFileError } from '../../device/keys.js';
import { tempDir } from './fixtures.js';

/** One example per code; the type makes a new code without an example fail to compile. */
const EXAMPLES: { [C in CliErrorCode]: CliErrorParams<C> } = {
  unknown_command: [{ command: 'frobnicate' }],
  bad_options: [{ problem: "Unknown option '--nope'" }],
  provision_arguments_missing: [],
  phone_gate_invalid: [
    {
      option: '--number',
      problem: 'expected a phone number such as +491701234567 (digits, optional leading +)',
    },
  ],
  phone_gate_unanswered: [],
  config_invalid: [{ problem: '/etc/gatelink/device.yaml: the configuration is not valid' }],
  key_file_unusable: [{ problem: 'private_key_file /etc/gatelink/device-key.pem is open to other users' }],
  daemon_running: [],
  unknown_object: [{ object: 'gat', file: '/etc/gatelink/device.yaml', objects: ['gate', 'garage'] }],
  cloud_url_invalid: [{ value: 'gatelink' }],
  cloud_not_https: [{ value: 'http://gatelink.example.com' }],
  objects_file_missing: [],
  objects_file_unreadable: [{ file: '/tmp/objects.yaml', problem: 'ENOENT' }],
  objects_list_missing: [{ file: '/tmp/objects.yaml' }],
  key_outside_folder: [
    { file: '/etc/gatelink/device-key.pem', folder: '/home/ann/try', objects: '/home/ann/objects.yaml' },
  ],
  ca_file_unusable: [{ file: '/etc/gatelink/ca.pem', problem: 'the file does not exist' }],
  cloud_certificate: [
    {
      problem:
        "the cloud's certificate for gatelink.example.com does not verify: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT); pass --ca-file with the CA that signed it",
    },
  ],
  cloud_unreachable: [{ cloud: 'https://gatelink.example.com', cause: 'ECONNREFUSED' }],
  cloud_answer_not_json: [
    { url: 'https://gatelink.example.com/api/device/provision', status: 502, cloud: 'https://x' },
  ],
  provisioning_code_invalid: [],
  provisioning_field_refused: [{ field: 'objects', message: 'Too many objects.' }],
  provisioning_rate_limited: [],
  provisioning_refused: [{ status: 500, code: 'internal', message: 'Something went wrong.' }],
  provisioning_answer_invalid: [{ path: 'pairing_code', problem: 'Required' }],
  command_key_invalid: [{ problem: 'not 32 bytes' }],
  cloud_config_invalid: [{ problem: 'device_id: expected D and 10 digits' }],
  no_gpio_chip: [{ root: '/sys/class/gpio' }],
  gpio_line_unusable: [{ problem: 'line 58 does not exist on gpiochip512 (pinctrl-bcm2711)' }],
  output_unusable: [{ problem: 'cannot open GPIO 529 for gate: EACCES' }],
  device_call_refused: [{ cloud: 'https://gatelink.example.com', device: 'D0123456789' }],
  reset_needs_confirmation: [],
  unexpected: [{ detail: 'Error: boom' }],
};

const codes = Object.keys(CLI_ERRORS) as CliErrorCode[];

describe('the CLI error table', () => {
  it.each(codes)('%s has an exit status and a one-line message', (code) => {
    const error = cliError(code, ...(EXAMPLES[code] as CliErrorParams<typeof code>));
    expect(error).toBeInstanceOf(CliError);
    expect(error.code).toBe(code);
    expect(Number.isInteger(error.exitCode) && error.exitCode >= 1 && error.exitCode <= 125).toBe(true);
    expect(error.exitCode).toBe(CLI_ERRORS[code].exit);
    expect(error.message.length).toBeGreaterThan(10);
    expect(error.message).not.toMatch(/undefined|\[object/);
  });

  it('exits 2 for usage mistakes only', () => {
    const usage = codes.filter((code) => CLI_ERRORS[code].exit === 2).sort();
    expect(usage).toEqual([
      'bad_options',
      'phone_gate_invalid',
      'phone_gate_unanswered',
      'provision_arguments_missing',
      'reset_needs_confirmation',
      'unknown_command',
    ]);
  });

  it("turns the config's, the key file's and unexpected errors into codes, keeping their messages", () => {
    const config = new ConfigError('/etc/gatelink/device.yaml', ['objects: expected a list']);
    expect(asCliError(config)).toMatchObject({
      code: 'config_invalid',
      exitCode: 1,
      message: config.message,
    });
    const key = new KeyFileError('private_key_file x is open to other users');
    expect(asCliError(key)).toMatchObject({ code: 'key_file_unusable', exitCode: 1, message: key.message });
    expect(asCliError(new Error('boom'))).toMatchObject({ code: 'unexpected', exitCode: 1 });
  });
});

describe('gatelink-device exit statuses', () => {
  it('exits 2 for an unknown command or option, 1 for a config it cannot read, 0 for help', async () => {
    const { dir, cleanup } = await tempDir();
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['frobnicate'])).toBe(2);
      expect(await main(['status', '--nope'])).toBe(2);
      expect(await main(['provision', '--cloud', 'https://gatelink.example.com'])).toBe(2);
      expect(await main(['status', '--config', join(dir, 'missing.yaml')])).toBe(1);
      expect(String(printed.mock.calls.at(-1)?.[0])).not.toMatch(/unexpected failure/);
      expect(await main(['help'])).toBe(0);
    } finally {
      vi.restoreAllMocks();
      await cleanup();
    }
  });
});
