/**
 * When the client sends a call again, and after how long (docs/design.md section 11.6; cloud/README.md,
 * "Retries: Idempotency-Key"). A call is sent again only when the second attempt cannot do what the first did
 * not: either nothing reached the cloud, or the call reads only (`status`), or it carries an Idempotency-Key, so
 * that the cloud answers a repeat with the first outcome instead of acting twice.
 */

export interface RetrySettings {
  /** Attempts after the first one. */
  retries: number;
  /** The first backoff ceiling; each retry doubles it up to `maxDelayMs` (full jitter below it). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest `Retry-After` the client waits for; a longer one is handed to the caller as an error. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  retries: 3,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/** What the attempt met: an answer (its status and error code, when it is a company API error), or none. */
export type Outcome =
  | { kind: 'answer'; status: number; code: string | undefined; retryAfterMs: number | undefined }
  | { kind: 'no_answer'; sent: 'not_sent' | 'maybe' };

/** What a call is: whether sending it twice is harmless on the cloud's side. */
export interface CallTraits {
  /** `status` only reads; a call with an Idempotency-Key is answered once. */
  repeatable: boolean;
  hasIdempotencyKey: boolean;
}

/** Whether to try again after `outcome`. */
export function shouldRetry(outcome: Outcome, call: CallTraits): boolean {
  if (outcome.kind === 'no_answer') return outcome.sent === 'not_sent' || call.repeatable;
  const { status, code } = outcome;
  // Nothing was sent to the gate, and the cloud does not keep a 429 under the key (cloud/README.md, "Retries").
  if (status === 429) return true;
  // Our own earlier attempt is still running (it timed out on our side): its outcome comes with the same key.
  if (status === 409) return code === 'idempotency_in_progress' && call.hasIdempotencyKey;
  // `device_offline` and `device_timeout` are the cloud's verdict and kept under the key: a repeat with the same
  // key only gets them back. `overloaded` comes before anything is written, with Retry-After. A 503 or 504
  // without a company API body comes from a proxy or a restarting cloud.
  if (status === 503) return code !== 'device_offline';
  if (status === 502 || status === 504) return code === undefined && call.repeatable;
  return false;
}

/** Full jitter: a uniform wait below a ceiling that doubles with every retry (`retry` counts from 0). */
export function backoffMs(retry: number, settings: RetrySettings, random: () => number): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` in milliseconds from now: delay-seconds or an HTTP-date (RFC 9110, 10.2.3); undefined if neither. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
