import type { Action } from '../../../shared/company-api/calls.js';
import { ERRORS, type ErrorCode } from '../../../shared/errors.js';

/**
 * Which refusals of shared/errors.ts each action can answer with (cloud/README.md, "Errors"; docs/design.md
 * section 1.1). The codes and their statuses and messages stay in the table; this says only where they apply,
 * so the OpenAPI document lists for each action exactly what a company may meet. `unknown_action` is on none:
 * each operation's path names its action, and `method_not_allowed` answers only other methods than POST.
 */

/** What any call can meet before its action runs: HTTP framing, the body's form, our own failure. */
const EVERY_CALL = [
  'bad_request',
  'headers_too_large',
  'request_timeout',
  'unsupported_media_type',
  'too_large',
  'bad_json',
  'invalid_field',
  'internal',
] as const satisfies readonly ErrorCode[];

/** docs/design.md section 2: both modes, before anything in the body is trusted. */
const AUTHENTICATION = [
  'auth_required',
  'bad_headers',
  'stale_timestamp',
  'nonce_reused',
  'bad_signature',
  'unknown_org',
  'bad_secret',
  'key_unavailable',
  'key_changed',
  'org_not_approved',
  'secret_disabled',
  'live_secret',
  'sandbox_secret',
] as const satisfies readonly ErrorCode[];

/** cloud/README.md, "Retries: `Idempotency-Key`": `request` and `open` only. */
const IDEMPOTENCY = [
  'idempotency_conflict',
  'idempotency_in_progress',
] as const satisfies readonly ErrorCode[];

/** cloud/README.md, "Opening": the checks of `open`, then the controller's answer. */
const OPENING = [
  'actor_required',
  'forbidden',
  'revoked',
  'expired',
  'not_started',
  'outside_hours',
  'openings_used',
  'rate_limit',
  'overloaded',
  'denied',
  'not_answered',
  'device_offline',
  'device_timeout',
  'device_error',
] as const satisfies readonly ErrorCode[];

export const ACTION_ERRORS: Record<Action, readonly ErrorCode[]> = {
  request: [...EVERY_CALL, ...AUTHENTICATION, ...IDEMPOTENCY],
  status: [...EVERY_CALL, ...AUTHENTICATION, 'not_found'],
  open: [...EVERY_CALL, ...AUTHENTICATION, ...IDEMPOTENCY, ...OPENING],
  trigger: [...EVERY_CALL, ...AUTHENTICATION],
  listen: [...EVERY_CALL, ...AUTHENTICATION, 'too_many_streams'],
  sandbox: [...EVERY_CALL, ...AUTHENTICATION, 'sandbox_only', 'not_found', 'invalid_state'],
};

/** The actions that honour `Idempotency-Key`. */
export const IDEMPOTENT_ACTIONS: readonly Action[] = ['request', 'open'];

/** An action's refusals grouped by HTTP status, statuses ascending, codes in the table's order. */
export function errorsByStatus(action: Action): Map<number, ErrorCode[]> {
  const wanted = new Set(ACTION_ERRORS[action]);
  const groups = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    if (!wanted.has(code)) continue;
    const status = ERRORS[code].status;
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return new Map([...groups].sort(([a], [b]) => a - b));
}
