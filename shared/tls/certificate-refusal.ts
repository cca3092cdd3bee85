/**
 * A TLS peer's certificate that Node.js refused, read the same way by the cloud (its external broker) and the
 * controller (its broker and the cloud's https): which check failed and OpenSSL's words for it, so that each says
 * in one line whose certificate does not verify, why, and what to do (docs/design.md section 7.4).
 */
export interface CertificateRefusal {
  /** Node's code, such as UNABLE_TO_VERIFY_LEAF_SIGNATURE. */
  code: string;
  /** OpenSSL's or Node's words, one line. */
  reason: string;
  /** untrusted: no CA at hand signed it; name: issued for another host; time: expired or not yet valid. */
  kind: 'untrusted' | 'name' | 'time';
}

/** Node's codes (OpenSSL's verification results, and its own name check) for a certificate it refused. */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The refusal that `error` is, or null for an error that is not about the peer's certificate. */
export function certificateRefusal(error: unknown): CertificateRefusal | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !CERTIFICATE_CODES.has(code)) return null;
  const message = error instanceof Error ? error.message : String(error);
  // The reason alone: Node.js 24 appends advice of its own after a semicolon (to run it with --use-system-ca),
  // which is no advice to someone configuring this program and would make the line differ between Node versions.
  const reason = (message.split(';')[0] ?? message).replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  const kind =
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH'
      ? 'name'
      : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
        ? 'time'
        : 'untrusted';
  return { code, reason, kind };
}
