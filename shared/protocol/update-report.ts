import { z } from 'zod';
import { LAST_TIME_MS, reportedText } from './reported-text.js';

/** The progress of an update, as a controller reports it in its retained state (docs/design.md section 12.4). */
const millis = z.number().int().nonnegative().max(LAST_TIME_MS);

/**
 * How far an update got, in the order it goes: `downloading` (the command passed its checks), `switched` (the
 * new release is unpacked and `current` points at it; the daemon restarts into it), then `healthy` (it came up
 * connected with its drivers started and its self-check passed, and is kept) or `rolled_back` (it did not, and
 * the controller went back by itself). `refused` and `failed` end an update before anything was switched.
 */
export const UPDATE_STATES = [
  'downloading',
  'switched',
  'healthy',
  'rolled_back',
  'refused',
  'failed',
] as const;
export type UpdateState = (typeof UPDATE_STATES)[number];

/** Why an update was refused, failed or rolled back: codes for counting, with a line of detail beside. */
export const UPDATE_REASONS = [
  // refusals, before any download
  'bad_signature',
  'wrong_device',
  'expired',
  'no_release_key',
  'bad_release_signature',
  'wrong_arch',
  'wrong_node',
  'older_version',
  'same_version',
  'foreign_url',
  'busy_updating',
  // the daemon runs outside an installed home (/opt/gatelink with releases, `current` and `known-good`)
  'not_updatable',
  // failures while downloading and unpacking
  'download_failed',
  'hash_mismatch',
  'bad_bundle',
  'no_space',
  // roll-backs
  'crashed',
  'not_healthy',
] as const;
export type UpdateReason = (typeof UPDATE_REASONS)[number];

export const updateReportSchema = z.strictObject({
  rollout_id: z.number().int().positive(),
  /** The release version this report is about (the one being installed, or rolled back from). */
  version: reportedText(32),
  state: z.enum(UPDATE_STATES),
  reason: z.enum(UPDATE_REASONS).optional(),
  detail: reportedText(300).optional(),
  at: millis,
});
export type UpdateReport = z.infer<typeof updateReportSchema>;
