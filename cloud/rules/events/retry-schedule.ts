/**
 * When a failed delivery is tried again (docs/design.md section 6): growing delays, each with ±20 % jitter so
 * that the events of one outage do not all come back at once, over about three days. After the last attempt
 * fails the endpoint is marked failing, and nothing more is tried until the company changes its callback
 * address or asks for a retry.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The delay after the first, second, ... failed attempt: 14 attempts over 75 h 42.5 min without jitter. */
export const RETRY_DELAYS_MS: readonly number[] = [
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  1 * HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
];

/** Attempts of one event before its endpoint is marked failing. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The whole schedule without jitter: also how long events wait for a company without a callback address. */
export const RETRY_WINDOW_MS = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);

/** How far a delay is moved either way, as a share of it. */
export const JITTER = 0.2;

/**
 * After any failed attempt the company's deliveries pause this long, so that an endpoint that is down or hangs
 * costs one attempt per pause, not one per waiting event.
 */
export const FAILURE_PAUSE_MS = 30 * SECOND;

/**
 * The delay before the next attempt, after `attemptsMade` attempts that all failed; null when that was the last.
 * `random` is in [0, 1), Math.random by default; tests pass a fixed one.
 */
export function retryDelay(attemptsMade: number, random: () => number = Math.random): number | null {
  const delay = RETRY_DELAYS_MS[attemptsMade - 1];
  if (delay === undefined) return null;
  return Math.round(delay * (1 - JITTER + 2 * JITTER * random()));
}
