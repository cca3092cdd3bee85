/**
 * The numbers of the company API that its error messages name (cloud/README.md, "Calls" and "Errors"): each is
 * defined once here, enforced by the cloud from here, and said by shared/errors.ts from here, so that a message
 * can never name another limit than the one in force.
 */

/**
 * The largest id a table holds (`integer` columns): a larger number in a request can name nothing, and must be
 * refused as out of range before it reaches the database, which would fail on it.
 */
export const MAX_ID = 2_147_483_647;
/** The largest body a company call may have. */
export const BODY_LIMIT_BYTES = 16 * 1024;
/** The largest request line and headers Node's parser accepts (its default, written down). */
export const HEADER_LIMIT_BYTES = 16 * 1024;
/** How far `X-Service-Ts` may be from the cloud's clock, either way. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;
/** How long `open` waits for the controller's acknowledgement before answering 504 `device_timeout`. */
export const ACK_TIMEOUT_MS = 8_000;
/**
 * The longest a customer may have an `open` wait for their answer ("ask me before each opening", docs/design.md
 * section 10.8); `open` on such a key may take this long and the acknowledgement's wait on top.
 */
export const ASK_FIRST_MAX_SECONDS = 120;
/** The wait a customer gets when they turn asking on without choosing one. */
export const ASK_FIRST_DEFAULT_SECONDS = 60;
/**
 * How long an `open` on a gate that a customer's phone calls waits, while the phone's controller is offline, for
 * someone of the household to tap "Call the gate" (docs/design.md section 10.9); never past OPEN_ANSWER_LIMIT_MS.
 */
export const CALL_TAP_SECONDS = 60;
/** The longest an `open` call may take before the cloud answers it: a question's wait, then the gate's. */
export const OPEN_ANSWER_LIMIT_MS = ASK_FIRST_MAX_SECONDS * 1000 + ACK_TIMEOUT_MS;
/** A pinned key not re-confirmed from the company's domain for this long stops working (`key_unavailable`). */
export const KEY_CONFIRMATION_LIMIT_MS = 24 * 3600 * 1000;

/** `16 KiB`, `8 seconds`, `24 hours`: a limit as a message says it. */
export const say = {
  bytes: (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`),
  seconds: (seconds: number) => `${seconds} seconds`,
  hours: (ms: number) => `${ms / 3_600_000} hours`,
};
