import { StartFailed } from '../../shared/lifecycle/lifecycle.js';
import { ConfigError } from '../config-error.js';
import { DriverError } from '../drivers/driver.js';
import { GpioMappingError, NoGpioChipError } from '../drivers/gpio-sysfs.js';
import { KeyFileError } from '../key-file-error.js';

/**
 * Every failure the CLI reports: its code, its exit status and the one readable line that says what to do next,
 * in one table (as shared/errors.ts is for the cloud). Code decides by `code`, never by the message text.
 * Usage mistakes exit 2, as `gatelink-device` without a command does; everything else exits 1.
 */
export const CLI_ERRORS = {
  unknown_command: {
    exit: 2,
    message: (p: { command: string }) =>
      `unknown command "${p.command}"; run gatelink-device help for the list`,
  },
  bad_options: {
    exit: 2,
    message: (p: { problem: string }) => `${p.problem}; run gatelink-device help for the options`,
  },
  provision_arguments_missing: {
    exit: 2,
    message: () => 'provision needs --cloud <base_url> and --code <code> (the operator gets both)',
  },
  phone_gate_invalid: {
    exit: 2,
    message: (p: { option: string; problem: string }) => `${p.option}: ${p.problem}`,
  },
  phone_gate_unanswered: {
    exit: 2,
    message: () =>
      "provision --phone asks for the gate's number and a name: run it in Termux's terminal, or pass --number and --label",
  },
  config_invalid: { exit: 1, message: (p: { problem: string }) => p.problem },
  key_file_unusable: { exit: 1, message: (p: { problem: string }) => p.problem },
  daemon_running: {
    exit: 1,
    message: () =>
      'the daemon is running; stop it first (sudo systemctl stop gatelink-device), then test again',
  },
  unknown_object: {
    exit: 1,
    message: (p: { object: string; file: string; objects: readonly string[] }) =>
      `no object "${p.object}" in ${p.file}; objects: ${p.objects.join(', ')}`,
  },
  cloud_url_invalid: {
    exit: 1,
    message: (p: { value: string }) =>
      `--cloud ${p.value} is not a URL; pass the base URL, e.g. https://gatelink.example.com`,
  },
  cloud_not_https: {
    exit: 1,
    message: (p: { value: string }) =>
      `--cloud must be an https:// address (plain http only for localhost); got ${p.value}`,
  },
  objects_file_missing: {
    exit: 1,
    message: () =>
      "name this controller's objects: pass --objects-from FILE with an objects list (see hardware/device.example.yaml)",
  },
  objects_file_unreadable: {
    exit: 1,
    message: (p: { file: string; problem: string }) => `cannot read ${p.file}: ${p.problem}`,
  },
  objects_list_missing: {
    exit: 1,
    message: (p: { file: string }) => `${p.file} has no objects list; see hardware/device.example.yaml`,
  },
  key_outside_folder: {
    exit: 1,
    message: (p: { file: string; folder: string; objects: string }) =>
      `private_key_file ${p.file} (from ${p.objects}) is outside ${p.folder}, and provision writes only in the ` +
      "config's folder: remove private_key_file from the objects file (the key then goes beside the config) " +
      'or name a file inside that folder',
  },
  ca_file_unusable: {
    exit: 1,
    message: (p: { file: string; problem: string }) =>
      `--ca-file ${p.file} cannot be used: ${p.problem}; give the PEM certificate of the CA (a bundle may hold several)`,
  },
  cloud_certificate: { exit: 1, message: (p: { problem: string }) => p.problem },
  cloud_unreachable: {
    exit: 1,
    message: (p: { cloud: string; cause: string }) =>
      `cannot reach ${p.cloud} (${p.cause}); check the address and this controller's network, then run provision again`,
  },
  cloud_answer_not_json: {
    exit: 1,
    message: (p: { url: string; status: number; cloud: string }) =>
      `${p.url} answered HTTP ${p.status} without JSON; is ${p.cloud} the Gatelink cloud?`,
  },
  provisioning_code_invalid: {
    exit: 1,
    message: () =>
      'the provisioning code is unknown, used or expired: ask the operator for a new one ' +
      '(gatelink-admin device add) and run provision again with it',
  },
  provisioning_field_refused: {
    exit: 1,
    message: (p: { field: string; message: string }) =>
      `the cloud refused ${p.field}: ${p.message} Check the objects file and run provision again`,
  },
  provisioning_rate_limited: {
    exit: 1,
    message: () => 'the cloud asks to slow down; wait a minute and run provision again',
  },
  provisioning_refused: {
    exit: 1,
    message: (p: { status: number; code: string; message: string }) =>
      `the cloud refused provisioning (HTTP ${p.status}, ${p.code}${p.message ? `: ${p.message}` : ''}); tell the operator`,
  },
  provisioning_answer_invalid: {
    exit: 1,
    message: (p: { path: string; problem: string }) =>
      `the cloud's answer is not a valid provisioning response (${p.path}: ${p.problem}); ` +
      'update gatelink-device to the version the cloud runs',
  },
  command_key_invalid: {
    exit: 1,
    message: (p: { problem: string }) => `the cloud sent a command key that is not valid (${p.problem})`,
  },
  cloud_config_invalid: {
    exit: 1,
    message: (p: { problem: string }) =>
      `the cloud's answer does not make a valid config (${p.problem}); report this to the operator`,
  },
  no_gpio_chip: {
    exit: 1,
    message: (p: { root: string }) =>
      `this machine has no GPIO chip (${p.root} is missing or empty): run on the controller with GPIO on ` +
      '(a Raspberry Pi), or to try without hardware use objects of kind: simulated ' +
      '(hardware/README.md, "Try it on a laptop")',
  },
  gpio_line_unusable: {
    exit: 1,
    message: (p: { problem: string }) =>
      `${p.problem}; check line, chip and sysfs_base of the relay objects (hardware/device.example.yaml)`,
  },
  output_unusable: {
    exit: 1,
    message: (p: { problem: string }) =>
      `${p.problem}; fix the wiring or the config, then run gatelink-device test again`,
  },
  device_call_refused: {
    exit: 1,
    message: (p: { cloud: string; device: string }) =>
      `${p.cloud} does not accept the signature of ${p.device}: the controller was retired or provisioned ` +
      "again elsewhere, or this board's clock is off by more than 5 minutes; check the clock, else ask the " +
      'operator for a provisioning code and run gatelink-device reset, then provision',
  },
  reset_needs_confirmation: {
    exit: 2,
    message: () => 'reset asks before it deletes anything; run it in a terminal, or pass --yes',
  },
  unexpected: { exit: 1, message: (p: { detail: string }) => `unexpected failure: ${p.detail}` },
} as const satisfies Record<string, { exit: number; message: (params: never) => string }>;

export type CliErrorCode = keyof typeof CLI_ERRORS;
/** The values a code's message needs; none for a code whose message is fixed. */
export type CliErrorParams<C extends CliErrorCode> = Parameters<(typeof CLI_ERRORS)[C]['message']>;

/** A failure the CLI reports as one readable line; build it with `cliError`. */
export class CliError extends Error {
  override name = 'CliError';
  readonly code: CliErrorCode;
  readonly exitCode: number;

  constructor(code: CliErrorCode, message: string) {
    super(message);
    this.code = code;
    this.exitCode = CLI_ERRORS[code].exit;
  }
}

export function cliError<C extends CliErrorCode>(code: C, ...params: CliErrorParams<C>): CliError {
  const message = CLI_ERRORS[code].message as (...args: CliErrorParams<C>) => string;
  return new CliError(code, message(...params));
}

/** Every way a command can fail, as a CLI error: the other modules' own errors keep their messages. */
export function asCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  // The daemon and the driver set name the part that failed to start; a reason the table below knows is said
  // in its own words, any other keeps the part's name (shared/lifecycle/lifecycle.ts).
  if (error instanceof StartFailed && isKnownReason(error.cause)) return asCliError(error.cause);
  if (error instanceof ConfigError) return cliError('config_invalid', { problem: error.message });
  if (error instanceof KeyFileError) return cliError('key_file_unusable', { problem: error.message });
  // A driver that cannot start says why in one line (hardware/README.md, "Try it on a laptop").
  if (error instanceof NoGpioChipError) return cliError('no_gpio_chip', { root: error.root });
  if (error instanceof GpioMappingError) return cliError('gpio_line_unusable', { problem: error.message });
  if (error instanceof DriverError) return cliError('output_unusable', { problem: error.message });
  return cliError('unexpected', { detail: (error as Error)?.stack ?? String(error) });
}

function isKnownReason(error: unknown): boolean {
  if (error instanceof StartFailed) return isKnownReason(error.cause);
  return [CliError, ConfigError, KeyFileError, NoGpioChipError, GpioMappingError, DriverError].some(
    (known) => error instanceof known,
  );
}

export const DEFAULT_CONFIG = '/etc/gatelink/device.yaml';
