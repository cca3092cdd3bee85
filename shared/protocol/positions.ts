import { z } from 'zod';
import type { SigningKey, VerifyKey } from '../crypto/ed25519.js';
import { LAST_TIME_MS } from './reported-text.js';
import { signedBytes, verifySignature, verifySignatureOffThread } from './signing.js';
import { DEVICE_ID_PATTERN } from './topics.js';
import { PROTOCOL_VERSION } from './version.js';

/**
 * A gate's position as its sensor sees it (docs/design.md section 7.5): a reed switch or limit switch on a GPIO
 * input, or a simulated one. Only two readings exist; a gate between the two reads `open` (the contact at the
 * closed end is not made), which is what a customer needs to know: it is not shut.
 */
export const POSITIONS = ['open', 'closed'] as const;
export type Position = (typeof POSITIONS)[number];

export const POSITION_TAG = 'gatelink/position/v1';

const millis = z.number().int().nonnegative().max(LAST_TIME_MS);

/**
 * A signed position report, carried on the device's `ack` topic beside acknowledgements (told apart by `type`),
 * so that every broker's existing rights cover it and it rides the same outbox, in order with the
 * acknowledgements (docs/design.md section 7.5).
 *
 * - `changed_at`: when the sensor settled in this position, on the controller's clock (Unix ms). A report is
 *   newer than another of the same object when its `changed_at` is later; the cloud applies only newer ones,
 *   so a replayed or reordered old report changes nothing.
 * - `at`: when the report was made. On connect the controller reports each sensor's current position again,
 *   with the same `changed_at` and a new `at`.
 * - `id`: unique per report, so that the outbox can confirm it like an acknowledgement.
 */
export const positionReportSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  type: z.literal('position'),
  id: z.uuid(),
  device_id: z.string().regex(DEVICE_ID_PATTERN),
  object: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/),
  position: z.enum(POSITIONS),
  changed_at: millis,
  at: millis,
  sig: z.string().regex(/^[A-Za-z0-9+/]{86}(==)?$/),
});
export type PositionReport = z.infer<typeof positionReportSchema>;

/**
 * Reports in one message at most: a burst of changes (every opening of a busy barrier moves its gate) costs the
 * broker and the cloud one message. 32 of the largest reports (about 300 bytes) stay well within the 16 KiB the
 * cloud reads of a message.
 */
export const MAX_BUNDLED_REPORTS = 32;

/**
 * Several position reports in one message on the `ack` topic (docs/design.md section 7.5). The envelope is not
 * signed: each report in it is, and each is checked as if it had come alone, so `reports` is read here only as a
 * list; what is in it is each report's own business.
 */
export const positionBundleSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  type: z.literal('positions'),
  device_id: z.string().regex(DEVICE_ID_PATTERN),
  reports: z.array(z.unknown()).min(1).max(MAX_BUNDLED_REPORTS),
});
export type PositionBundle = z.infer<typeof positionBundleSchema>;

/** A bundle made of reports' signed texts as they are stored, without parsing them again. */
export function bundlePayload(deviceId: string, reports: readonly string[]): string {
  return `{"v":${PROTOCOL_VERSION},"type":"positions","device_id":${JSON.stringify(deviceId)},"reports":[${reports.join(',')}]}`;
}
export type UnsignedPositionReport = Omit<PositionReport, 'sig'>;

export function signPositionReport(key: SigningKey, report: UnsignedPositionReport): PositionReport {
  const sig = Buffer.from(key.sign(signedBytes(POSITION_TAG, report))).toString('base64');
  return { ...report, sig };
}

export function verifyPositionReport(key: VerifyKey, report: PositionReport): boolean {
  return verifySignature(key, signedBytes(POSITION_TAG, report), report.sig);
}

/**
 * verifyPositionReport on libuv's thread pool: the cloud checks reports many at a time, while its event loop
 * serves openings (docs/design.md section 7.5).
 */
export function verifyPositionReportOffThread(key: VerifyKey, report: PositionReport): Promise<boolean> {
  return verifySignatureOffThread(key, signedBytes(POSITION_TAG, report), report.sig);
}
