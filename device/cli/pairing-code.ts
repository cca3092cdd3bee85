import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  type PairingCodeResponse,
  pairingCodeResponseSchema,
  signDeviceCall,
} from '../../shared/protocol/updates.js';
import { readCaBundle } from '../broker-tls.js';
import { certificateFailure } from '../certificate-failure.js';
import { type DeviceConfig, loadConfig } from '../config.js';
import { writeFileAtomic } from '../files.js';
import { readDeviceKey } from '../keys.js';
import { cliError } from './cli-error.js';
import { postToCloud } from './cloud-post.js';

/** The pairing code as this controller last heard it, in `<state_dir>/pairing.json`. */
const rememberedSchema = z.object({
  paired: z.boolean(),
  pairing_code: z.string().nullable(),
  pairing_expires_at: z.string().nullable(),
  /** When the cloud said so (ISO 8601). */
  heard_at: z.string(),
});
export type RememberedPairing = z.infer<typeof rememberedSchema>;

const PAIRING_FILE = 'pairing.json';
const PATH = '/api/device/pairing-code';

/**
 * Asks the cloud for this controller's pairing code (docs/design.md section 9.1) with a call signed by the
 * controller's key, over the cloud's https trusted as provisioning trusted it (the system's roots and
 * `mqtt.ca_file`), and remembers the answer in the state folder for `status`.
 */
export async function fetchPairingCode(
  config: DeviceConfig,
  options: { now?: () => Date; timeoutMs?: number } = {},
): Promise<PairingCodeResponse> {
  const key = readDeviceKey(config.private_key_file);
  const now = options.now?.() ?? new Date();
  const call = {
    method: 'POST',
    path: PATH,
    time: now.getTime(),
    bodySha256: createHash('sha256').update('').digest('hex'),
  };
  const headers = signDeviceCall(key, config.device_id, call);
  const cloud = config.cloud_url.replace(/\/+$/, '');
  const ca = config.mqtt.ca_file === undefined ? undefined : readCaBundle(config.mqtt.ca_file);
  let answer: { status: number; text: string };
  try {
    answer = await postToCloud(`${cloud}${PATH}`, { ca, headers, timeoutMs: options.timeoutMs });
  } catch (error) {
    const problem = certificateFailure("the cloud's", new URL(cloud).hostname, error, {
      untrusted: 'set mqtt.ca_file to the CA that signed it, as provision --ca-file does',
    });
    if (problem !== null) throw cliError('cloud_certificate', { problem });
    throw cliError('cloud_unreachable', { cloud, cause: (error as Error).message });
  }
  const parsed = pairingCodeResponseSchema.safeParse(safeJson(answer.text));
  if (answer.status === 401) throw cliError('device_call_refused', { cloud, device: config.device_id });
  if (answer.status !== 200 || !parsed.success) {
    throw cliError('cloud_answer_not_json', { url: `${cloud}${PATH}`, status: answer.status, cloud });
  }
  await rememberPairing(config.state_dir, parsed.data, now);
  return parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Kept for `status` when the cloud cannot be reached; losing it only loses that hint. */
export async function rememberPairing(
  stateDir: string,
  answer: PairingCodeResponse,
  now: Date,
): Promise<void> {
  const remembered: RememberedPairing = { ...answer, heard_at: now.toISOString() };
  await writeFileAtomic(join(stateDir, PAIRING_FILE), `${JSON.stringify(remembered)}\n`, {
    mode: 0o600,
  }).catch(() => undefined);
}

export async function rememberedPairing(stateDir: string): Promise<RememberedPairing | null> {
  try {
    const parsed = rememberedSchema.safeParse(
      JSON.parse(await readFile(join(stateDir, PAIRING_FILE), 'utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** `gatelink-device pairing-code`: the code the customer enters, until when, and where. */
export async function pairingCodeCommand(options: {
  configPath: string;
  now?: () => Date;
  print?: (line: string) => void;
}): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const config = loadConfig(options.configPath);
  const answer = await fetchPairingCode(config, { now: options.now });
  if (answer.paired || answer.pairing_code === null) {
    print(`Controller ${config.device_id} is on a customer's account, so it has no pairing code.`);
    print(
      'To hand it over, its owner removes it in the Gatelink app ("Remove this barrier from your account");',
    );
    print('then run gatelink-device pairing-code again for the next owner.');
    return 0;
  }
  print(`Pairing code: ${answer.pairing_code}`);
  print(`Valid until ${answer.pairing_expires_at}, once.`);
  print(
    'The customer enters it in the Gatelink app under "Add a barrier", or under "Replace the controller"',
  );
  print(
    'on the barrier whose broken controller this one replaces. After it expires, run this again for a new one.',
  );
  return 0;
}
