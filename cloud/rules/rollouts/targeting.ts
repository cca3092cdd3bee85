import { createHash } from 'node:crypto';

/** Whom a rollout is for (docs/design.md section 12.4.2). */
export type RolloutTarget = 'all' | { percent: number } | { devices: string[] };

/**
 * Whether a device falls within a rollout's percentage: a hash of the rollout and the device, so the subset is
 * the same every time it is computed and differs from one rollout to the next.
 */
export function inPercent(rolloutId: number, deviceId: string, percent: number): boolean {
  const digest = createHash('sha256').update(`${rolloutId}:${deviceId}`).digest();
  return digest.readUInt32BE(0) % 100 < percent;
}
