import { z } from 'zod';
import { decodeBase64, type SigningKey, type VerifyKey } from '../crypto/ed25519.js';
import { signedManifestSchema } from '../releases/manifest.js';
import { LAST_TIME_MS } from './reported-text.js';
import { signedBytes } from './signing.js';
import { DEVICE_ID_PATTERN } from './topics.js';
import { PROTOCOL_VERSION } from './version.js';

export {
  UPDATE_REASONS,
  UPDATE_STATES,
  type UpdateReason,
  type UpdateReport,
  type UpdateState,
  updateReportSchema,
} from './update-report.js';

/**
 * Updates over the air (docs/design.md section 12.4). The cloud asks a controller to update with an `update`
 * command on the controller's own `cmd` topic, signed with the service key like an opening; the command carries
 * the release manifest as the release key signed it, and where to download the bundle. The controller reports
 * how far it got in its retained `state` (`update`), so the cloud learns it again after any reconnect.
 */
const millis = z.number().int().nonnegative().max(LAST_TIME_MS);

export const UPDATE_COMMAND_TAG = 'gatelink/update/v1';

export const updateCommandSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  id: z.uuid(),
  device_id: z.string().regex(DEVICE_ID_PATTERN),
  action: z.literal('update'),
  /** The rollout this command belongs to; the controller names it back in its reports. */
  rollout_id: z.number().int().positive(),
  release: signedManifestSchema,
  /** Where the bundle is: an https address on the controller's own cloud (plain http only to its own board). */
  url: z.string().max(2048),
  /** The operator marked this rollout a downgrade: an older release than the running one is taken. */
  allow_downgrade: z.boolean(),
  issued_at: millis,
  expires_at: millis,
  sig: z.string().regex(/^[A-Za-z0-9+/]{86}(==)?$/),
});
export type UpdateCommand = z.infer<typeof updateCommandSchema>;
export type UnsignedUpdateCommand = Omit<UpdateCommand, 'sig'>;

/** Update commands live longer than openings: a controller may be finishing an opening when one comes. */
export const UPDATE_COMMAND_LIFETIME_MS = 60_000;

export function signUpdateCommand(key: SigningKey, command: UnsignedUpdateCommand): UpdateCommand {
  const sig = Buffer.from(key.sign(signedBytes(UPDATE_COMMAND_TAG, command))).toString('base64');
  return { ...command, sig };
}

export function verifyUpdateCommand(key: VerifyKey, command: UpdateCommand): boolean {
  const signature = decodeBase64(command.sig);
  return signature !== null && key.verify(signedBytes(UPDATE_COMMAND_TAG, command), signature);
}

/**
 * Calls a controller makes to the cloud over HTTPS, signed with its device key (the cloud knows the public half
 * from provisioning): fetching a release bundle and renewing its pairing code. The signature covers the method,
 * the path with its query, the time and the body's SHA-256, so it cannot be moved to another call; the cloud
 * refuses a time more than DEVICE_CALL_TOLERANCE_MS from its own.
 */
export const DEVICE_CALL_TAG = 'gatelink/device-call/v1';
export const DEVICE_CALL_TOLERANCE_MS = 300_000;
export const DEVICE_CALL_HEADERS = {
  device: 'gatelink-device',
  time: 'gatelink-device-time',
  signature: 'gatelink-device-signature',
} as const;

export interface DeviceCall {
  method: string;
  /** Path and query as sent, e.g. `/api/device/releases/3/bundle`. */
  path: string;
  /** Unix milliseconds, as the header carries it. */
  time: number;
  /** Lower-case hex SHA-256 of the body (of the empty string when there is none). */
  bodySha256: string;
}

export function deviceCallBytes(deviceId: string, call: DeviceCall): Uint8Array {
  return new TextEncoder().encode(
    `${DEVICE_CALL_TAG}\n${deviceId}\n${call.method.toUpperCase()}\n${call.path}\n${call.time}\n${call.bodySha256}`,
  );
}

/** The headers of a signed device call. */
export function signDeviceCall(key: SigningKey, deviceId: string, call: DeviceCall): Record<string, string> {
  return {
    [DEVICE_CALL_HEADERS.device]: deviceId,
    [DEVICE_CALL_HEADERS.time]: String(call.time),
    [DEVICE_CALL_HEADERS.signature]: Buffer.from(key.sign(deviceCallBytes(deviceId, call))).toString(
      'base64',
    ),
  };
}

export function verifyDeviceCall(
  key: VerifyKey,
  deviceId: string,
  call: DeviceCall,
  signature: string,
): boolean {
  const bytes = decodeBase64(signature);
  return bytes !== null && key.verify(deviceCallBytes(deviceId, call), bytes);
}

/** `POST /api/device/pairing-code`, signed: the current pairing code of an unpaired controller, or a fresh one. */
export const pairingCodeResponseSchema = z.strictObject({
  paired: z.boolean(),
  /** Grouped in fours; null once a customer has added the controller. */
  pairing_code: z.string().nullable(),
  pairing_expires_at: z.string().nullable(),
});
export type PairingCodeResponse = z.infer<typeof pairingCodeResponseSchema>;
