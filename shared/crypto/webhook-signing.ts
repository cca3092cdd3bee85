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
