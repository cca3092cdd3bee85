import { readFileSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { decodeBase64, KeyError, strictPublicKeyFromBase64 } from '../shared/crypto/ed25519.js';
import { DEVICE_ID_PATTERN, TOPIC_PREFIX_PATTERN } from '../shared/protocol/topics.js';
import { plainRemoteProblem, plainRemoteUrl, readCaBundle } from './broker-tls.js';
import { ConfigError } from './config-error.js';
import { modemSchema, objectConfigSchema } from './config-objects.js';
import { filePath, int, text, url, urlList } from './config-values.js';

/**
 * The controller's configuration file (docs/design.md section 9): YAML or JSON by extension, one schema,
 * parsed once, frozen and passed in explicitly. Every bad value is reported on its own line that names the
 * key and says what it accepts; unknown keys are refused so that a typo does not silently fall back to a
 * default. Relative paths are resolved against the folder of the config file.
 */

const commandKey = z
  .string({ error: 'expected the cloud command public key: 32 bytes in standard base64' })
  .superRefine((value, ctx) => {
    if (decodeBase64(value)?.length !== 32) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected the cloud command public key: 32 bytes in standard base64',
      });
      return;
    }
    try {
      strictPublicKeyFromBase64(value);
    } catch (error) {
      const why = error instanceof KeyError ? error.message : 'not a valid key';
      ctx.addIssue({ code: 'custom', message: `expected a valid Ed25519 public key (${why})` });
    }
  });

const configSchema = z
  .strictObject({
    /** The cloud's base URL, as given to `gatelink-device provision --cloud`. */
    cloud_url: url('the cloud base URL', ['https://', 'http://']),
    device_id: z
      .string({ error: 'expected the device id given at provisioning (D followed by 10 characters)' })
      .regex(DEVICE_ID_PATTERN, {
        error: 'expected the device id given at provisioning (D followed by 10 characters)',
      }),
    mqtt: z.strictObject({
      url: urlList('the broker URL', ['mqtts://', 'mqtt://', 'wss://', 'ws://']),
      username: text('the broker user name'),
      password: text('the broker password'),
      /** Longest wait between reconnection attempts; the first is 1 s, doubling up to this. */
      reconnect_max_ms: int('the longest reconnect delay in milliseconds', 100, 600_000).default(60_000),
      keepalive_s: int('the MQTT keepalive in seconds', 5, 3600).default(30),
      /** The CA (PEM, one or a bundle) that signed the broker's certificate; unset, the system's trust store. */
      ca_file: filePath(
        "the path of the CA certificate (PEM) that signed the broker's certificate",
      ).optional(),
      /** Allows plain mqtt:// or ws:// to a broker off this board, on a network trusted not to listen. */
      insecure: z.boolean({ error: 'expected true or false' }).default(false),
    }),
    topic_prefix: z
      .string({ error: 'expected topic levels of letters, digits, _ or - separated by /' })
      .regex(TOPIC_PREFIX_PATTERN, {
        error: 'expected topic levels of letters, digits, _ or - separated by /',
      }),
    command_key: commandKey,
    /**
     * The operator's release public key (base64), pinned at provisioning: only releases it signed are installed
     * (docs/design.md section 12.4.3). Unset, every update is refused (no_release_key).
     */
    release_key: commandKey.optional(),
    updates: z
      .strictObject({
        /** How long a new release has to come up healthy before the controller goes back to the previous one. */
        health_timeout_s: int('the health timeout of a new release in seconds', 1, 3600).default(120),
      })
      .default({ health_timeout_s: 120 }),
    /** The device's Ed25519 private key (PEM, PKCS#8), readable by the daemon's user only (mode 0600). */
    /** Defaults to device-key.pem beside the config (`defaultPaths`). */
    private_key_file: filePath('the path of the device private key (PEM)').optional(),
    /** Defaults to /var/lib/gatelink beside /etc/gatelink, else `state` beside the config (`defaultPaths`). */
    state_dir: filePath('the folder for the daemon state (executed commands, status file)').optional(),
    /** Where unsent acknowledgements wait; defaults to <state_dir>/outbox. */
    outbox_dir: filePath('the folder for unsent acknowledgements').optional(),
    objects: z
      .array(objectConfigSchema, { error: 'expected a list of objects' })
      .min(1, { error: 'expected at least one object' })
      .max(32, { error: 'expected at most 32 objects' }),
    modem: modemSchema.optional(),
    telemetry: z
      .strictObject({ interval_s: int('the telemetry interval in seconds', 5, 86_400).default(60) })
      .default({ interval_s: 60 }),
    clock: z
      .strictObject({
        /**
         * How the daemon learns that the clock is synchronised: `timedatectl` (systemd, NTPSynchronized=yes),
         * `timesyncd` (the file /run/systemd/timesync/synchronized exists) or `none` (trust the clock; for
         * development only).
         */
        check: z
          .enum(['timedatectl', 'timesyncd', 'none'], { error: 'expected timedatectl, timesyncd or none' })
          .default('timedatectl'),
        interval_s: int('the clock check interval in seconds', 1, 3600).default(30),
      })
      .default({ check: 'timedatectl', interval_s: 30 }),
  })
  .superRefine((config, ctx) => {
    const plain = config.mqtt.insecure ? undefined : plainRemoteUrl(config.mqtt.url);
    if (plain !== undefined)
      ctx.addIssue({ code: 'custom', path: ['mqtt', 'url'], message: plainRemoteProblem(plain) });
    const seen = new Map<string, number>();
    const lines = new Map<string, number>();
    const inputs: { index: number; line: { chip: string; line: number } }[] = [];
    config.objects.forEach((object, index) => {
      const first = seen.get(object.id);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['objects', index, 'id'],
          message: `expected a unique object id; "${object.id}" is also objects[${first}]`,
        });
      } else seen.set(object.id, index);
      if (object.kind === 'relay') {
        const key = `${object.chip}:${object.line}`;
        const other = lines.get(key);
        if (other !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['objects', index, 'line'],
            message: `expected a line that no other object uses; line ${object.line} is also objects[${other}]`,
          });
        } else lines.set(key, index);
      }
      if (object.kind !== 'simulated' && object.sensor) inputs.push({ index, line: object.sensor });
      if (object.kind === 'gsm' && !config.modem) {
        ctx.addIssue({
          code: 'custom',
          path: ['modem'],
          message: `expected a modem section (path, baud_rate), since objects[${index}] is a gsm object`,
        });
      }
    });
    checkSensorLines(ctx, lines, inputs);
    if (config.modem && config.modem.reopen_max_ms < config.modem.reopen_min_ms) {
      ctx.addIssue({
        code: 'custom',
        path: ['modem', 'reopen_max_ms'],
        message: 'expected a value not below modem.reopen_min_ms',
      });
    }
  });

/**
 * A sensor's input is a line of its own: one a relay drives, or another sensor reads, would be exported twice,
 * and a relay's output would read as a gate moving (docs/design.md section 12.5).
 */
function checkSensorLines(
  ctx: z.RefinementCtx,
  relayLines: ReadonlyMap<string, number>,
  inputs: readonly { index: number; line: { chip: string; line: number } }[],
): void {
  const sensorLines = new Map<string, number>();
  for (const { index, line } of inputs) {
    const key = `${line.chip}:${line.line}`;
    const relay = relayLines.get(key);
    const sensor = sensorLines.get(key);
    const path = ['objects', index, 'sensor', 'line'];
    if (relay !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `expected a line that no relay uses; line ${line.line} is the relay of objects[${relay}]: wire the sensor to a free GPIO input`,
      });
    } else if (sensor !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `expected a line that no other sensor uses; line ${line.line} is also the sensor of objects[${sensor}]`,
      });
    } else sensorLines.set(key, index);
  }
}

type ParsedConfig = z.output<typeof configSchema>;

export type {
  GpioSensorConfig,
  GsmObjectConfig,
  ModemConfig,
  ObjectConfig,
  PhoneObjectConfig,
  RelayObjectConfig,
  SensorConfig,
  SimulatedObjectConfig,
  SimulatedSensorConfig,
} from './config-objects.js';
export { objectConfigSchema } from './config-objects.js';

type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The parsed, frozen configuration: every path is set (`defaultPaths`) and absolute. */
export type DeviceConfig = DeepReadonly<
  Omit<ParsedConfig, 'private_key_file' | 'state_dir' | 'outbox_dir'> & {
    private_key_file: string;
    state_dir: string;
    outbox_dir: string;
    config_file: string;
  }
>;

/** The input form (defaults not yet applied), used by `provision` to write a file. */
export type DeviceConfigInput = z.input<typeof configSchema>;

export { ConfigError };

const SECRET_KEYS = new Set(['password', 'pin', 'command_key']);

/** Reads, parses and validates the config file; throws ConfigError with one line per problem. */
export function loadConfig(file: string): DeviceConfig {
  const path = resolve(file);
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'the file does not exist' : `it cannot be read (${code ?? 'error'})`;
    throw new ConfigError(path, [
      `${why}; run gatelink-device provision first, or pass --config with the right path`,
    ]);
  }
  return parseConfig(source, path);
}

/** Parses config text; the format follows the extension of `file` (.json is JSON, anything else YAML). */
export function parseConfig(source: string, file: string): DeviceConfig {
  const path = resolve(file);
  let raw: unknown;
  try {
    raw = extname(path).toLowerCase() === '.json' ? JSON.parse(source) : parseYaml(source);
  } catch (error) {
    const what = extname(path).toLowerCase() === '.json' ? 'JSON' : 'YAML';
    throw new ConfigError(path, [
      `the file is not valid ${what}: ${(error as Error).message.split('\n')[0]}`,
    ]);
  }
  return validateConfig(raw, path);
}

/** Validates an already parsed value as the config of the file `file` (used for resolving relative paths). */
export function validateConfig(raw: unknown, file: string): DeviceConfig {
  const path = resolve(file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(path, ['expected a mapping of keys (cloud_url, device_id, mqtt, objects, ...)']);
  }
  const result = configSchema.safeParse(raw, { reportInput: true });
  if (!result.success) throw new ConfigError(path, result.error.issues.map(describeIssue));
  const base = dirname(path);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const config = result.data;
  const defaults = defaultPaths(path);
  const stateDir = abs(config.state_dir ?? defaults.stateDir);
  const caFile = config.mqtt.ca_file === undefined ? undefined : abs(config.mqtt.ca_file);
  if (caFile !== undefined) checkCaFile(path, caFile);
  return deepFreeze({
    ...config,
    mqtt: { ...config.mqtt, ca_file: caFile },
    config_file: path,
    private_key_file: abs(config.private_key_file ?? defaults.privateKeyFile),
    state_dir: stateDir,
    outbox_dir: abs(config.outbox_dir ?? join(stateDir, 'outbox')),
    modem: config.modem ? { ...config.modem, path: abs(config.modem.path) } : undefined,
  });
}

/** A CA file that cannot pin the broker is refused at load, not at the first connection. */
function checkCaFile(configFile: string, caFile: string): void {
  try {
    readCaBundle(caFile);
  } catch (error) {
    throw new ConfigError(configFile, [
      `mqtt.ca_file: ${caFile} cannot be used: ${(error as Error).message}; give the PEM certificate of the CA that signed the broker's certificate`,
    ]);
  }
}

/**
 * Where the key and the state go when the config does not say (docs/design.md section 9): the key beside the
 * config; the state in /var/lib/gatelink for a config in /etc/ (the systemd unit's StateDirectory), else in
 * `state` beside the config. Provisioning uses the same defaults.
 */
export function defaultPaths(configFile: string): { privateKeyFile: string; stateDir: string } {
  const base = dirname(resolve(configFile));
  return {
    privateKeyFile: join(base, 'device-key.pem'),
    stateDir: resolve(configFile).startsWith('/etc/') ? '/var/lib/gatelink' : join(base, 'state'),
  };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = formatPath(issue.path);
  const where = key === '' ? '(top level)' : key;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `${where}: unknown key ${keys}; check the spelling against hardware/device.example.yaml`;
  }
  const last = issue.path[issue.path.length - 1];
  const message =
    issue.path[0] === 'objects' && last === 'id' && issue.code !== 'custom'
      ? 'expected an object id: 1 to 32 lowercase letters, digits, _ or -, starting with a letter or digit'
      : issue.message;
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${where}: missing; ${message}`;
  const secret = typeof last === 'string' && SECRET_KEYS.has(last);
  return `${where}: ${message}${secret ? '' : got(issue)}`;
}

function got(issue: z.core.$ZodIssue): string {
  if (!('input' in issue) || issue.input === undefined || typeof issue.input === 'object') return '';
  const shown = JSON.stringify(issue.input);
  return ` (got ${shown.length > 40 ? `${shown.slice(0, 37)}...` : shown})`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value as DeepReadonly<T>;
}

/** The objects as the cloud sees them (protocol `deviceObjectSchema`). */
export function publicObjects(config: Pick<DeviceConfig, 'objects'>) {
  // `sensor` only when there is one: a state without it reads as before to a cloud that does not know it.
  return config.objects.map((object) => ({
    id: object.id,
    label: object.label,
    kind: object.kind,
    ...(object.sensor ? { sensor: true } : {}),
    // The number a phone dials, so that its owner can be asked to call the gate while the phone is offline.
    ...(object.kind === 'phone' ? { gate_number: object.number } : {}),
  }));
}
