import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../../shared/errors.js';
import { parseJsonObject } from '../../foundation/http/validation.js';
import type { Company } from '../companies/companies.js';
import type { VerifyKeyCache } from '../domain-keys/verify-keys.js';
import type { CallAuthContext } from './call-auth-context.js';
import { authenticateSecret } from './secret.js';
import { authenticateSignature, readSignatureHeaders } from './signature.js';

export interface Caller {
  company: Company;
  mode: 'signature' | 'secret';
  /** The body as a JSON object, parsed after (signature mode) or for (secret mode) authentication. */
  body: Record<string, unknown>;
}

/**
 * What `authenticate` may leave pending. `writes`: the call changes something, so it is authenticated in full,
 * the nonce included, before it goes on. `reads`: the nonce's decision is in `fresh`, and the caller answers
 * only once it resolved (docs/design.md section 2.1).
 */
export type CallKind = 'writes' | 'reads';

export interface PendingCaller extends Caller {
  /** Resolves once the call is known not to be a replay; rejects with `nonce_reused`. */
  fresh: Promise<void>;
}

/**
 * Authenticates a company call before anything in its body is trusted (docs/design.md section 2).
 * Signature headers win when present; otherwise the body must carry org_id and secret.
 */
export async function authenticate(
  ctx: CallAuthContext,
  headers: IncomingHttpHeaders,
  rawBody: Uint8Array,
  keys: VerifyKeyCache,
  kind: CallKind = 'writes',
): Promise<PendingCaller> {
  const signed = readSignatureHeaders(headers);
  if (signed) {
    const { company, fresh } = await authenticateSignature(ctx, signed, rawBody, keys);
    if (kind === 'writes') await fresh;
    const body = parseJsonObject(rawBody);
    if (body.org_id !== undefined && body.org_id !== company.id) throw new ApiError('unknown_org');
    return { company, mode: 'signature', body, fresh };
  }
  const body = parseJsonObject(rawBody);
  // Both or nothing: half a credential is no credential (docs/design.md section 2), not a field error.
  if (body.org_id === undefined || body.secret === undefined) throw new ApiError('auth_required');
  const company = await authenticateSecret(ctx, body.org_id, body.secret);
  return { company, mode: 'secret', body, fresh: Promise.resolve() };
}

/**
 * Runs a read-only call beside its nonce's decision and answers only once both are known; a replay is told
 * so whatever the read found, as it would have been had the decision come first.
 */
export async function answerOnceFresh<T>(caller: PendingCaller, read: Promise<T>): Promise<T> {
  const [fresh, answer] = await Promise.allSettled([caller.fresh, read]);
  if (fresh.status === 'rejected') throw fresh.reason;
  if (answer.status === 'rejected') throw answer.reason;
  return answer.value;
}
