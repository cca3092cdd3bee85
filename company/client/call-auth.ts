import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { signRequest } from '../../shared/crypto/request-signing.js';

/**
 * How a call proves who sends it (cloud/README.md, "Authentication"): signed with the company's key, bound to its
 * domain, or `org_id` and `secret` in the body for a company without a domain.
 */
export interface SignatureAuth {
  domain: string;
  key: SigningKey;
}

export interface SecretAuth {
  orgId: number;
  secret: string;
}

export type ClientAuth = SignatureAuth | SecretAuth;

function isSecretAuth(auth: ClientAuth): auth is SecretAuth {
  return 'secret' in auth;
}

/** The exact bytes a call sends, the same on every attempt: the cloud compares them for an Idempotency-Key. */
export function callBody(auth: ClientAuth, fields: Record<string, unknown>): string {
  return JSON.stringify(isSecretAuth(auth) ? { org_id: auth.orgId, secret: auth.secret, ...fields } : fields);
}

/**
 * The authentication headers of one attempt. A signature is made for every attempt with a fresh nonce and the
 * current time: the cloud accepts a nonce once, so a retry with the first attempt's headers would be refused as
 * `nonce_reused` (docs/design.md section 2).
 */
export function attemptHeaders(auth: ClientAuth, body: string, nowMs: number): Record<string, string> {
  if (isSecretAuth(auth)) return {};
  return { ...signRequest(auth.key, { domain: auth.domain, body, ts: Math.floor(nowMs / 1000) }) };
}
