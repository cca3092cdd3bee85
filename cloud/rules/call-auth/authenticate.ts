import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../../shared/errors.js';
import { parseJsonObject } from '../../foundation/http/validation.js';
import type { Company } from '../companies/companies.js';
import type { VerifyKeyCache } from '../domain-keys/verify-keys.js';
import { sandboxCompany } from '../sandbox/sandbox-world.js';
import type { CallAuthContext } from './call-auth-context.js';
import { authenticateSecret } from './secret.js';
import { authenticateSignature, readSignatureHeaders } from './signature.js';

export interface Caller {
  /** The company the call acts for: in the sandbox, the company's sandbox (docs/design.md section 11.9). */
  company: Company;
  mode: 'signature' | 'secret';
  /** Whether the call is the sandbox's: `"sandbox": true` in its (signed) body. */
  sandbox: boolean;
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
    // Parsed before the signature is checked only to know which key checks it; trusted once it verified, and
    // a body that is not a JSON object is refused only then, as ever.
    const parsed = parseBody(rawBody);
    const sandbox = parsed instanceof ApiError ? false : parsed.sandbox === true;
    const { company, fresh } = await authenticateSignature(ctx, signed, rawBody, keys, sandbox);
    if (kind === 'writes') await fresh;
    if (parsed instanceof ApiError) throw parsed;
    const body = parsed;
    if (body.org_id !== undefined && body.org_id !== company.id) throw new ApiError('unknown_org');
    if (!sandbox) return { company, mode: 'signature', sandbox, body, fresh };
    return { company: await sandboxCompany(ctx, company), mode: 'signature', sandbox, body, fresh };
  }
  const body = parseJsonObject(rawBody);
  // Both or nothing: half a credential is no credential (docs/design.md section 2), not a field error.
  if (body.org_id === undefined || body.secret === undefined) throw new ApiError('auth_required');
  const sandbox = body.sandbox === true;
  const company = await authenticateSecret(ctx, body.org_id, body.secret, sandbox);
  return { company, mode: 'secret', sandbox, body, fresh: Promise.resolve() };
}

/** The body as a JSON object, or the refusal it earns once the call is authenticated. */
function parseBody(rawBody: Uint8Array): Record<string, unknown> | ApiError {
  try {
    return parseJsonObject(rawBody);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
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
