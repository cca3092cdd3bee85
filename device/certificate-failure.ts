import { certificateRefusal } from '../shared/tls/certificate-refusal.js';

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
  const refusal = certificateRefusal(error);
  if (!refusal) return null;
  const remedy =
    refusal.kind === 'name'
      ? `use the name the certificate was issued for, or issue one for ${host}`
      : refusal.kind === 'time'
        ? "check this controller's clock, then renew the certificate"
        : advice.untrusted;
  return `${what} certificate for ${host} does not verify: ${refusal.reason} (${refusal.code}); ${remedy}`;
}
