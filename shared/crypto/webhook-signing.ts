import { createHmac } from 'node:crypto';

/**
 * What a webhook's signature covers (docs/design.md section 6, cloud/README.md "Verifying a delivery"):
 * Standard Webhooks' signed content `<webhook-id>.<webhook-timestamp>.<body>`, the body as the very bytes sent.
 * Shared so that the cloud, which signs, and the company client, which verifies, build the same bytes.
 */
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** Standard Webhooks' name for an asymmetric (Ed25519) signature in `webhook-signature`. */
export const WEBHOOK_SIGNATURE_VERSION = 'v1a';

/** The bytes signed for one attempt; `timestamp` is the `webhook-timestamp` text, Unix seconds. */
export function webhookSignedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  const bodyBytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + bodyBytes.length);
  content.set(prefix);
  content.set(bodyBytes, prefix.length);
  return content;
}

/**
 * Standard Webhooks' symmetric signature: HMAC-SHA256 of the same signed content under a secret the receiver
 * holds too, which every Standard Webhooks library verifies (docs/design.md section 6). Sent beside `v1a`.
 */
export const WEBHOOK_HMAC_VERSION = 'v1';

/** How a symmetric secret is written: this prefix, then the key's bytes in standard base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The key bytes of a `whsec_` secret, or null for anything else. */
export function webhookSecretKey(secret: string): Uint8Array | null {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return null;
  const base64 = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]{32,}={0,2}$/.test(base64)) return null;
  return new Uint8Array(Buffer.from(base64, 'base64'));
}

/** The `v1` signature of `content` under `key`, standard base64. */
export function webhookHmac(key: Uint8Array, content: Uint8Array): string {
  return createHmac('sha256', key).update(content).digest('base64');
}
