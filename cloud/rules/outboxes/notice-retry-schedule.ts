/**
 * When a push that failed is tried again (docs/design.md section 10.6): quickly at first, since a notification
 * is about something happening now, then less often, and never past `GIVE_UP_AFTER_MS` after the opening: a
 * notification two hours late is noise, and the journal keeps the entry anyway. Each delay moves ±20 % so that
 * an outage's rows do not all come back at once.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;

export const PUSH_RETRY_DELAYS_MS: readonly number[] = [
  10 * SECOND,
  30 * SECOND,
  1 * MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  20 * MINUTE,
  30 * MINUTE,
];

/** No attempt is made later than this after the row was written. */
export const GIVE_UP_AFTER_MS = 2 * 60 * MINUTE;

const JITTER = 0.2;

/** The delay after `attemptsMade` failed attempts; null when none is left. `random` in [0, 1). */
export function pushRetryDelay(attemptsMade: number, random: () => number = Math.random): number | null {
  const delay = PUSH_RETRY_DELAYS_MS[attemptsMade - 1];
  if (delay === undefined) return null;
  return Math.round(delay * (1 - JITTER + 2 * JITTER * random()));
}
