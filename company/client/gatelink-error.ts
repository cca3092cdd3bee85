import type { ErrorCode } from '../../shared/errors.js';

/**
 * The client's own failures, beside the cloud's codes of shared/errors.ts (cloud/README.md, "Errors"). They are
 * kept apart from the cloud's table on purpose: the cloud never answers them, the client makes them up when
 * there is no answer to read, or when an answer says a wait is over (docs/design.md section 11.6).
 * - `network_error`: no answer after the last attempt (refused or reset connection, timeout before an answer);
 * - `unexpected_answer`: an answer that is not the company API's shape (not JSON, a 200 that fails its schema,
 *   a proxy's error page);
 * - `declined`: `waitForAccess` read that the customer declined the request (status 200: the answer that said
 *   so). `expired` and `revoked`, its other ends, are the cloud's own codes.
 */
export const CLIENT_ERROR_CODES = ['network_error', 'unexpected_answer', 'declined'] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** Every code a `GatelinkError` can carry. A code newer than this client is passed on as the cloud sent it. */
export type GatelinkErrorCode = ErrorCode | ClientErrorCode;

export interface GatelinkErrorInit<C extends GatelinkErrorCode> {
  code: C;
  /** The HTTP status of the answer; 0 when there was none (`network_error`). */
  status: number;
  message: string;
  field?: string;
  detail?: string;
  requestId?: string;
  retryAfterSeconds?: number;
  idempotencyKey?: string;
  attempts: number;
  cause?: unknown;
}

/** A refusal of the cloud, or the client's own `network_error` / `unexpected_answer`. */
export class GatelinkError<C extends GatelinkErrorCode = GatelinkErrorCode> extends Error {
  override name = 'GatelinkError';
  readonly code: C;
  readonly status: number;
  readonly field: string | undefined;
  readonly detail: string | undefined;
  /** `X-Request-Id` of the last answer: quote it when you report a problem. */
  readonly requestId: string | undefined;
  /** From `Retry-After` (429 `rate_limit`), in seconds. */
  readonly retryAfterSeconds: number | undefined;
  /** The key the call carried: call again with it to get the first outcome instead of acting twice. */
  readonly idempotencyKey: string | undefined;
  /** How many times the call was sent. */
  readonly attempts: number;

  constructor(init: GatelinkErrorInit<C>) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.field = init.field;
    this.detail = init.detail;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.idempotencyKey = init.idempotencyKey;
    this.attempts = init.attempts;
  }
}

/** Whether `value` is a GatelinkError, with the given code when one is named (narrowing `code` to it). */
export function isGatelinkError<C extends GatelinkErrorCode = GatelinkErrorCode>(
  value: unknown,
  code?: C,
): value is GatelinkError<C> {
  return value instanceof GatelinkError && (code === undefined || value.code === code);
}
