import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../shared/errors.js';
import type { Company } from '../companies/companies.js';
import type { VerifyKeyCache } from '../company-keys/verify-keys.js';
import type { CloudContext } from '../context.js';
import { parseJsonObject } from '../http/validation.js';
import { authenticateSecret } from './secret.js';
import { authenticateSignature, readSignatureHeaders } from './signature.js';

export interface Caller {
  company: Company;
  mode: 'signature' | 'secret';
  /** The body as a JSON object, parsed after (signature mode) or for (secret mode) authentication. */
  body: Record<string, unknown>;
}

/**
 * Authenticates a company call before anything in its body is trusted (docs/design.md section 2).
 * Signature headers win when present; otherwise the body must carry org_id and secret.
 */
export async function authenticate(
  ctx: CloudContext,
  headers: IncomingHttpHeaders,
  rawBody: Uint8Array,
  keys: VerifyKeyCache,
): Promise<Caller> {
  const signed = readSignatureHeaders(headers);
  if (signed) {
    const company = await authenticateSignature(ctx, signed, rawBody, keys);
    const body = parseJsonObject(rawBody);
    if (body.org_id !== undefined && body.org_id !== company.id) throw new ApiError('unknown_org');
    return { company, mode: 'signature', body };
  }
  const body = parseJsonObject(rawBody);
  // Both or nothing: half a credential is no credential (docs/design.md section 2), not a field error.
  if (body.org_id === undefined || body.secret === undefined) throw new ApiError('auth_required');
  const company = await authenticateSecret(ctx, body.org_id, body.secret);
  return { company, mode: 'secret', body };
}
