import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { SigningKey, strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import {
  type ProvisionRequest,
  type ProvisionResponse,
  provisionResponseSchema,
} from '../../shared/protocol/provisioning.js';
import { readCaBundle } from '../broker-tls.js';
import { certificateFailure } from '../certificate-failure.js';
import {
  ConfigError,
  type DeviceConfig,
  type DeviceConfigInput,
  defaultPaths,
  publicObjects,
  validateConfig,
} from '../config.js';
import { writeFileAtomic } from '../files.js';
import { VERSION } from '../version.js';
import { type CliError, cliError } from './cli-error.js';
import { postToCloud } from './cloud-post.js';
import { nextSteps } from './next-steps.js';
import { rememberPairing } from './pairing-code.js';
import { type PhoneGate, phoneSettings } from './phone-gate.js';

export interface ProvisionOptions {
  /** The cloud's base URL, e.g. https://gatelink.example.com. */
  cloud: string;
  /** The one-time provisioning code from `gatelink-admin device add`. */
  code: string;
  configPath: string;
  /** A YAML or JSON file with `objects` (and optionally `modem`, `state_dir`, `telemetry`, `clock`). */
  objectsFrom?: string;
  stateDir?: string;
  /**
   * A PEM file, one CA or a bundle: written as `mqtt.ca_file` (the broker's CA) and trusted, besides the system's
   * roots, for the HTTPS call to the cloud here.
   */
  caFile?: string;
  /** Written as `mqtt.insecure: true`: plain mqtt:// to a broker off this board, on a trusted network. */
  mqttInsecure?: boolean;
  /** Allows plain http:// to hosts other than localhost (never in production). */
  allowHttp?: boolean;
  /**
   * A phone controller's one gate (`provision --phone`, docs/design.md section 9.3), instead of an objects file:
   * the config gets its `phone` object and the phone's own clock.
   */
  phoneGate?: PhoneGate;
}

export interface ProvisionResult {
  config: DeviceConfig;
  response: ProvisionResponse;
}

/** Keys the installer may bring in the objects file; the rest comes from the cloud. */
const INSTALLER_KEYS = [
  'objects',
  'modem',
  'state_dir',
  'outbox_dir',
  'private_key_file',
  'telemetry',
  'updates',
  'clock',
];

/**
 * Provisions this controller (docs/design.md section 9): generates its Ed25519 key here (the private key never
 * leaves the controller), registers the public key and the objects with the cloud, pins the cloud's command key
 * and writes the config file. The key and the config are written with mode 0600 (the config holds the broker
 * password). Nothing is written when the cloud refuses.
 */
export async function provision(options: ProvisionOptions): Promise<ProvisionResult> {
  const cloud = cloudBase(options.cloud, options.allowHttp ?? false);
  const configPath = resolve(options.configPath);
  const installer = installerSettings(configPath, options);
  const caFile = options.caFile === undefined ? undefined : resolve(options.caFile);
  const ca = caFile === undefined ? undefined : caBundle(caFile);
  const key = SigningKey.generate();

  // Checked before the code is spent: a placeholder for everything the cloud will send.
  const draft = (
    response: Pick<ProvisionResponse, 'device_id' | 'mqtt' | 'topic_prefix' | 'command_key' | 'release_key'>,
  ) =>
    ({
      cloud_url: cloud,
      device_id: response.device_id,
      mqtt: {
        ...response.mqtt,
        ...(caFile === undefined ? {} : { ca_file: caFile }),
        ...(options.mqttInsecure ? { insecure: true } : {}),
      },
      topic_prefix: response.topic_prefix,
      command_key: response.command_key,
      // The operator's release key, pinned here: updates must be signed by it (docs/design.md section 12.4.3).
      ...(response.release_key === undefined ? {} : { release_key: response.release_key }),
      ...installer,
    }) as DeviceConfigInput;
  const checked = validateConfig(
    draft({
      device_id: 'D0000000000',
      mqtt: { url: 'mqtts://placeholder', username: 'placeholder', password: 'placeholder' },
      topic_prefix: 'gatelink',
      command_key: key.publicKey.base64,
    }),
    configPath,
  );

  const request: ProvisionRequest = {
    code: options.code.trim(),
    public_key: key.publicKey.base64,
    objects: publicObjects(checked),
    version: VERSION,
  };
  const response = await register(cloud, request, ca);
  try {
    strictPublicKeyFromBase64(response.command_key);
  } catch (error) {
    throw cliError('command_key_invalid', { problem: (error as Error).message });
  }

  let config: DeviceConfig;
  try {
    config = validateConfig(draft(response), configPath);
  } catch (error) {
    const detail = error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message;
    throw cliError('cloud_config_invalid', { problem: detail });
  }

  await mkdir(dirname(config.private_key_file), { recursive: true, mode: 0o700 });
  await mkdir(dirname(configPath), { recursive: true, mode: 0o700 });
  const newKey = `${config.private_key_file}.new`;
  await rm(newKey, { force: true });
  await writeFileAtomic(newKey, key.toPem(), { mode: 0o600 });
  await rename(newKey, config.private_key_file);
  const document = {
    ...draft(response),
    private_key_file: config.private_key_file,
    state_dir: config.state_dir,
  };
  const text =
    extname(configPath).toLowerCase() === '.json'
      ? `${JSON.stringify(document, null, 2)}\n`
      : `# Written by gatelink-device provision for ${response.device_id}.\n${stringifyYaml(document)}`;
  await writeFileAtomic(configPath, text, { mode: 0o600 });
  // For `status` when the cloud cannot be asked (docs/design.md section 9.1): kept in the state folder only
  // when install.sh has made it, since that folder is the daemon's and provisioning never creates it.
  await rememberPairing(
    config.state_dir,
    {
      paired: response.paired === true,
      pairing_code: response.pairing_code ?? null,
      pairing_expires_at: response.pairing_expires_at ?? null,
    },
    new Date(),
  );
  return { config, response };
}

/** `gatelink-device provision`: provisions, then tells the installer what to hand to the customer. */
export async function provisionCommand(options: ProvisionOptions): Promise<number> {
  const { config, response } = await provision(options);
  console.log(`Provisioned controller ${response.device_id}.`);
  console.log(`Config: ${config.config_file}`);
  console.log(`Private key: ${config.private_key_file} (mode 0600, never leaves this controller)`);
  for (const object of config.objects) {
    const number = response.numbers.find((n) => n.id === object.id);
    console.log(
      `  ${object.id}: ${object.label} (${object.kind})${number ? `, number_id ${number.number_id}` : ''}`,
    );
  }
  console.log('');
  if (response.paired) {
    // A customer's own set-up code (docs/design.md section 9.3): the barrier is on their list already.
    console.log('Paired to your account: the barrier is on your list of barriers in the Gatelink app.');
  } else {
    console.log(`Pairing code for the customer: ${response.pairing_code}`);
    console.log(
      `Valid until ${response.pairing_expires_at}, once. The customer enters it in the Gatelink app.`,
    );
    console.log('Later, gatelink-device pairing-code shows it again, or a fresh one once it has expired.');
  }
  console.log('');
  for (const line of nextSteps(config.config_file)) console.log(line);
  return 0;
}

function cloudBase(value: string, allowHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw cliError('cloud_url_invalid', { value });
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (loopback || allowHttp))) {
    throw cliError('cloud_not_https', { value });
  }
  return url.href.replace(/\/+$/, '');
}

function caBundle(file: string): string {
  try {
    return readCaBundle(file);
  } catch (error) {
    throw cliError('ca_file_unusable', { file, problem: (error as Error).message });
  }
}

function installerSettings(configPath: string, options: ProvisionOptions): Record<string, unknown> {
  if (options.phoneGate)
    return placePaths(phoneSettings(options.phoneGate), configPath, configPath, options.stateDir);
  const source = options.objectsFrom
    ? resolve(options.objectsFrom)
    : existsSync(configPath)
      ? configPath
      : null;
  if (!source) {
    throw cliError('objects_file_missing');
  }
  let raw: unknown;
  try {
    const text = readFileSync(source, 'utf8');
    raw = extname(source).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw cliError('objects_file_unreadable', {
      file: source,
      problem: (error as Error).message.split('\n')[0] ?? '',
    });
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || !('objects' in raw)) {
    throw cliError('objects_list_missing', { file: source });
  }
  const picked: Record<string, unknown> = {};
  for (const key of INSTALLER_KEYS) {
    const value = (raw as Record<string, unknown>)[key];
    if (value !== undefined) picked[key] = value;
  }
  return placePaths(picked, source, configPath, options.stateDir);
}

/**
 * Where the key and the state go (docs/design.md section 9): a relative path in the objects file is relative to
 * that file, as in any config; the key, which provisioning writes, must be inside the config's folder, since
 * provisioning writes nothing outside the folder it was given; the state folder is the daemon's, by default
 * /var/lib/gatelink beside /etc/gatelink and `state` beside any other config.
 */
function placePaths(
  picked: Record<string, unknown>,
  source: string,
  configPath: string,
  stateDir: string | undefined,
): Record<string, unknown> {
  const from = dirname(source);
  const base = dirname(configPath);
  for (const key of ['private_key_file', 'state_dir', 'outbox_dir'] as const) {
    const value = picked[key];
    if (typeof value === 'string' && !isAbsolute(value)) picked[key] = resolve(from, value);
  }
  const defaults = defaultPaths(configPath);
  picked.private_key_file ??= defaults.privateKeyFile;
  const keyFile = picked.private_key_file;
  if (typeof keyFile === 'string' && relative(base, keyFile).startsWith('..')) {
    throw cliError('key_outside_folder', { file: keyFile, folder: base, objects: source });
  }
  if (stateDir) picked.state_dir = resolve(stateDir);
  picked.state_dir ??= defaults.stateDir;
  return picked;
}

async function register(
  cloud: string,
  request: ProvisionRequest,
  ca: string | undefined,
): Promise<ProvisionResponse> {
  const url = `${cloud}/api/device/provision`;
  let answer: { status: number; text: string };
  try {
    answer = await postToCloud(url, { body: JSON.stringify(request), ca });
  } catch (error) {
    const host = new URL(cloud).hostname;
    const problem = certificateFailure("the cloud's", host, error, {
      untrusted:
        "pass --ca-file with the CA that signed it (a PEM file, which may also hold the broker's CA)",
    });
    if (problem !== null) throw cliError('cloud_certificate', { problem });
    throw cliError('cloud_unreachable', { cloud, cause: (error as Error).message });
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw cliError('cloud_answer_not_json', { url, status: answer.status, cloud });
  }
  if (answer.status < 200 || answer.status > 299) throw refusal(answer.status, body);
  const parsed = provisionResponseSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw cliError('provisioning_answer_invalid', {
      path: first?.path.join('.') || 'body',
      problem: first?.message ?? 'not valid',
    });
  }
  return parsed.data;
}

/** The cloud's refusal as a CLI error, by the cloud's own error code (cloud/README.md). */
function refusal(status: number, body: unknown): CliError {
  const error = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const code = typeof error.error === 'string' ? error.error : 'unknown';
  const message = typeof error.message === 'string' ? error.message : '';
  switch (code) {
    case 'provisioning_code_invalid':
      return cliError('provisioning_code_invalid');
    case 'invalid_field':
      return cliError('provisioning_field_refused', {
        field: typeof error.field === 'string' ? error.field : 'a field',
        message,
      });
    case 'rate_limit':
      return cliError('provisioning_rate_limited');
    default:
      return cliError('provisioning_refused', { status, code, message });
  }
}
