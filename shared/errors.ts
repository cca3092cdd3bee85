/**
 * Every error the service can answer with: its code, HTTP status and one readable sentence.
 * The cloud turns an `ApiError` into `{"error", "message", "field"?}` in one place (cloud/foundation/http/errors.ts);
 * the table is also the documentation checked against cloud/README.md by a test.
 */
import {
  ACK_TIMEOUT_MS,
  BODY_LIMIT_BYTES,
  HEADER_LIMIT_BYTES,
  KEY_CONFIRMATION_LIMIT_MS,
  say,
  TIMESTAMP_TOLERANCE_SECONDS,
} from './limits.js';

export const ERRORS = {
  // docs/design.md section 1: the HTTP shape
  unknown_action: {
    status: 400,
    message: 'Unknown or missing action: use a=request, a=status, a=open, a=trigger or a=listen.',
  },
  bad_json: { status: 400, message: 'The body must be a JSON object.' },
  unsupported_media_type: { status: 415, message: 'Send the body with Content-Type: application/json.' },
  too_large: { status: 413, message: `The body is larger than ${say.bytes(BODY_LIMIT_BYTES)}.` },
  invalid_field: { status: 400, message: 'A field has the wrong type or is out of range.' },
  not_found: { status: 404, message: 'No such request for this company.' },
  internal: {
    status: 500,
    message: 'Something went wrong on our side; quote the X-Request-Id when you report it.',
  },
  idempotency_conflict: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different body; use a new key for a new call.',
  },
  idempotency_in_progress: {
    status: 409,
    message: 'A call with this Idempotency-Key is still being processed; retry in a moment.',
  },
  // Requests refused before they reach a route: by Node's HTTP parser, its timeouts, or for their method.
  bad_request: {
    status: 400,
    message:
      'The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.',
  },
  headers_too_large: {
    status: 431,
    message: `The request line and headers are larger than ${say.bytes(HEADER_LIMIT_BYTES)}; send fewer or shorter headers.`,
  },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive in time; send the headers and body at once, then retry.',
  },
  unavailable: {
    status: 503,
    message: 'The service is briefly unavailable; retry after the delay in Retry-After.',
  },
  method_not_allowed: {
    status: 405,
    message: 'The company API answers only POST: send POST /api/company.php?a=<action>.',
  },

  // docs/design.md section 2: authentication
  auth_required: {
    status: 401,
    message: 'Sign the call with the X-Service-* headers, or send org_id and secret in the body.',
  },
  bad_headers: {
    status: 401,
    message:
      'Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).',
  },
  stale_timestamp: {
    status: 401,
    message: `X-Service-Ts is more than ${say.seconds(TIMESTAMP_TOLERANCE_SECONDS)} from our clock; sync your clock.`,
  },
  nonce_reused: {
    status: 401,
    message: 'This nonce was already used; send a fresh random nonce with every call.',
  },
  bad_signature: {
    status: 401,
    message: 'The signature does not match the body and headers under your key.',
  },
  unknown_org: { status: 401, message: 'No company is registered with this domain or org_id.' },
  bad_secret: { status: 401, message: 'The secret is wrong.' },
  key_unavailable: {
    status: 401,
    message: `Your key file could not be fetched for ${say.hours(KEY_CONFIRMATION_LIMIT_MS)}; publish it at /.well-known/service.json.`,
  },
  key_changed: {
    status: 401,
    message:
      'Your key file holds a different key than the one confirmed; confirm the rotation in your account area.',
  },
  org_not_approved: { status: 403, message: 'The company is not approved, or is suspended.' },
  secret_disabled: {
    status: 403,
    message: 'This company has a domain: sign calls with its key instead of a secret.',
  },
  // docs/design.md section 11.9: each kind of secret with its own calls
  live_secret: {
    status: 401,
    message: 'This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).',
  },
  sandbox_secret: {
    status: 401,
    message: 'This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).',
  },
  sandbox_only: {
    status: 400,
    message: 'a=sandbox moves your sandbox only: send "sandbox": true in the body.',
  },

  // docs/design.md section 4: opening
  actor_required: { status: 400, message: 'Name the employee who opens in actor.' },
  forbidden: { status: 403, message: 'The key is not yours, or the object is not in the key.' },
  revoked: { status: 403, message: 'The customer withdrew this access.' },
  expired: { status: 403, message: "The key's lifetime has ended." },
  // docs/design.md section 3.1: the shape the customer gave the grant
  not_started: {
    status: 403,
    message: 'The customer set a later start for this access; status shows it as shape.starts_at.',
  },
  outside_hours: {
    status: 403,
    message: 'This is outside the hours the customer allowed; status shows them as shape.windows.',
  },
  openings_used: {
    status: 403,
    message: 'Every opening the customer allowed has been used; ask them for more.',
  },
  // docs/design.md section 10.8: the customer asked to be asked first
  denied: {
    status: 403,
    message:
      'The customer denied this opening when asked; nothing was opened. Ask them before you try again.',
  },
  not_answered: {
    status: 403,
    message:
      'The customer asks to approve each opening and did not answer in time; nothing was opened. Call them, then try again.',
  },
  rate_limit: {
    status: 429,
    message: 'Too many openings with this key in the last minute; retry after the delay.',
  },
  too_many_streams: {
    status: 429,
    message: 'You have as many listen streams open as allowed; close one before you open another.',
  },
  device_offline: { status: 503, message: "The barrier's controller is not connected; nothing was queued." },
  overloaded: {
    status: 503,
    message:
      'The service has as many openings waiting as it can take; nothing was written. Retry after the delay.',
  },
  device_timeout: {
    status: 504,
    message: `The controller did not confirm the opening within ${say.seconds(ACK_TIMEOUT_MS / 1000)}.`,
  },
  device_error: { status: 502, message: 'The controller reported a failure; see detail.' },

  // operator API and provisioning (docs/design.md sections 8 and 9)
  unauthorized: { status: 401, message: 'Send the operator token as Authorization: Bearer <token>.' },
  conflict: { status: 409, message: 'The change conflicts with the current state.' },
  key_fetch_failed: { status: 502, message: "The company's key file could not be fetched or is not valid." },
  device_auth_failed: {
    status: 401,
    message:
      "The call must be signed with the controller's device key and a time within 5 minutes of the cloud's: check the board's clock, or provision it again.",
  },
  release_not_found: {
    status: 404,
    message:
      'No release for this CPU has been rolled out to all controllers yet: the operator uploads one and runs gatelink-admin rollout start <id> --all.',
  },
  provisioning_code_invalid: {
    status: 403,
    message:
      'The provisioning code is unknown, used or expired; ask for a new one with gatelink-admin device add.',
  },
  pairing_code_invalid: { status: 403, message: 'The pairing code is unknown, used or expired.' },
  invalid_state: { status: 409, message: 'The request is not in a state that allows this.' },

  // docs/design.md section 12.4.2: releases and rollouts
  release_key_unset: {
    status: 409,
    message: 'The cloud has no RELEASE_PUBLIC_KEY: set it before uploading releases.',
  },
  release_signature_invalid: {
    status: 422,
    message: "The release manifest is malformed or not signed by the cloud's RELEASE_PUBLIC_KEY.",
  },
  release_bundle_mismatch: {
    status: 422,
    message: "The bundle's SHA-256 or size differs from its signed manifest.",
  },
  release_exists: {
    status: 409,
    message: 'A release of this version for this architecture is already stored.',
  },

  // docs/design.md section 10: the customer application's pages
  csrf_failed: {
    status: 403,
    message: 'The form has expired or came from another site; reload the page and try again.',
  },
  sign_in_required: { status: 401, message: 'Sign in to continue.' },
  too_many_attempts: { status: 429, message: 'Too many attempts from here; wait a moment and try again.' },
  // docs/design.md section 10.6: notifications on the customer's devices
  push_subscription_refused: {
    status: 400,
    message:
      "This browser's notification subscription cannot be used: it must name an https push service on a public host.",
  },
  too_many_push_devices: {
    status: 409,
    message: 'Notifications are on in as many browsers as an account may have; remove one first.',
  },
  // docs/design.md section 10.2: accounts
  email_unavailable: {
    status: 503,
    message: 'We could not send the e-mail just now; try again in a few minutes, or use a passkey.',
  },
  passkey_refused: {
    status: 400,
    message:
      'The passkey answer could not be verified: it was made for another request or site, or took too long. Try again.',
  },
  passkey_unknown: {
    status: 401,
    message:
      'This passkey is not registered with Gatelink (it may have been removed): sign in with an e-mail code.',
  },
  last_way_in: {
    status: 409,
    message:
      'This passkey is your only way to sign in: add another passkey or confirm an e-mail address before removing it.',
  },
  email_taken: {
    status: 409,
    message:
      'This e-mail address belongs to another Gatelink account: sign in to that account with it instead.',
  },
  // docs/design.md section 9.2: a barrier's household
  household_full: {
    status: 409,
    message:
      'This barrier is shared with as many people as it may be; remove someone or withdraw an invitation first.',
  },

  // docs/design.md section 11: the company account area and the operator console
  owner_required: {
    status: 403,
    message: "Only the company's owner can do this; ask them, or ask them to make you the owner.",
  },
  viewer_only: {
    status: 403,
    message: "You may look at this company's pages but not change them; its owner can make you a developer.",
  },
  operator_required: {
    status: 403,
    message: "This is Gatelink's operator console: sign in with the operator token or an operator's passkey.",
  },
  domain_taken: {
    status: 409,
    message: 'Another company already holds this domain; if it is yours, write to the operators.',
  },
  logo_refused: {
    status: 400,
    message: 'The logo must be a square PNG, JPEG or WebP image of at most 1 MiB.',
  },
  callback_refused: {
    status: 400,
    message: 'The callback address must be an https address on a public host.',
  },
  too_many_endpoints: {
    status: 409,
    message: 'A company has at most 10 callback endpoints; remove one before adding another.',
  },
  endpoint_exists: {
    status: 409,
    message: 'You have an endpoint at this address already: manage it in the list.',
  },
  key_proof_failed: {
    status: 400,
    message:
      'The signature does not verify with the key published on your domain; sign the text shown, as shown.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An expected failure that the caller should see. Anything else is a 500 `internal`. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly field: string | undefined;
  readonly detail: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; field?: string; detail?: string; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERRORS[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.field = options.field;
    this.detail = options.detail;
    this.headers = options.headers;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.code, message: this.message };
    if (this.field !== undefined) body.field = this.field;
    if (this.detail !== undefined) body.detail = this.detail;
    return body;
  }
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  field?: string;
  detail?: string;
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
