import { createHash, randomBytes } from 'node:crypto';
import type { SigningKey } from './ed25519.js';

/**
 * Signed company calls (docs/design.md section 2; cloud/README.md, "Signature bound to your domain"):
 * base string `<domain>.<ts>.<nonce>.<lowercase hex SHA-256 of the raw body>`, UTF-8, signed with Ed25519.
 * Shared so that the cloud's verifier, our examples and the tests build the very same bytes.
 */
export const SIGNATURE_HEADERS = {
  org: 'x-service-org',
  ts: 'x-service-ts',
  nonce: 'x-service-nonce',
  sig: 'x-service-sig',
} as const;

export function bodyDigestHex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export function baseString(domain: string, ts: string, nonce: string, body: Uint8Array | string): string {
  return `${domain}.${ts}.${nonce}.${bodyDigestHex(body)}`;
}

export interface SignedHeaders {
  'X-Service-Org': string;
  'X-Service-Ts': string;
  'X-Service-Nonce': string;
  'X-Service-Sig': string;
}

/** Headers for one call: a fresh nonce and the current time unless given. */
export function signRequest(
  key: SigningKey,
  call: { domain: string; body: string; ts?: number; nonce?: string },
): SignedHeaders {
  const ts = String(call.ts ?? Math.floor(Date.now() / 1000));
  const nonce = call.nonce ?? randomBytes(16).toString('hex');
  const message = new TextEncoder().encode(baseString(call.domain, ts, nonce, call.body));
  return {
    'X-Service-Org': call.domain,
    'X-Service-Ts': ts,
    'X-Service-Nonce': nonce,
    'X-Service-Sig': Buffer.from(key.sign(message)).toString('base64'),
  };
}
