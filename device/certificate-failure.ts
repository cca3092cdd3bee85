/**
 * One line for a TLS certificate that does not verify, naming the host, Node's reason and its code, and what to do
 * (docs/design.md section 9): for the broker in the daemon's log and `gatelink-device status`, for the cloud in
 * `gatelink-device provision`. Null for an error that is not about the certificate.
 */
export function certificateFailure(
  what: string,
  host: string,
  error: unknown,
  advice: { untrusted: string },
): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !CERTIFICATE_CODES.has(code)) return null;
  const reason = (error as Error).message.replace(/\s+/g, ' ').replace(/\.$/, '');
  const todo =
    code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `use the name the certificate was issued for, or issue one for ${host}`
      : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
        ? "check this controller's clock, then renew the certificate"
        : advice.untrusted;
  return `${what} certificate for ${host} does not verify: ${reason} (${code}); ${todo}`;
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
