import type { SigningKey } from '../../../shared/crypto/ed25519.js';
import {
  WEBHOOK_HEADERS,
  WEBHOOK_HMAC_VERSION,
  WEBHOOK_SIGNATURE_VERSION,
  webhookHmac,
  webhookSignedContent,
} from '../../../shared/crypto/webhook-signing.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';

/**
 * What a company's callback address receives (docs/design.md section 6, cloud/README.md "Events"): the body
 * `{"type", "id", "at", "data"}` and the Standard Webhooks headers, signed with the cloud's own Ed25519 key
 * (the `v1a` scheme), whose public half `/.well-known/service.json` publishes, and with each of the company's
 * signing secrets still valid (the `v1` scheme, ./signing-secrets.ts).
 */

export interface OutboxEvent {
  id: string;
  type: string;
  at: Date;
  data: unknown;
}

/**
 * The body, made once per event: every attempt sends the same bytes. An event of a company's sandbox says
 * `"sandbox": true` (docs/design.md section 11.9), so that no receiver takes it for a live one.
 */
export function webhookBody(event: OutboxEvent, sandbox = false): string {
  const body = { type: event.type, id: event.id, at: formatTimestamp(event.at), data: event.data };
  return JSON.stringify(sandbox ? { sandbox: true, ...body } : body);
}

/**
 * The headers of one attempt. The signed content is shared/crypto/webhook-signing.ts's; `webhook-signature` lists
 * a `v1,` HMAC under each of `hmacKeys` (the newest first, both during a rotation's overlap) and then `v1a,` the
 * Ed25519 signature, space-separated, as Standard Webhooks lists several. The timestamp is the attempt's, in
 * Unix seconds, so a receiver can refuse an old message replayed to it.
 */
export function webhookHeaders(
  serviceKey: SigningKey,
  message: { id: string; timestamp: number; body: string },
  hmacKeys: readonly Uint8Array[] = [],
): Record<string, string> {
  const timestamp = String(message.timestamp);
  const content = webhookSignedContent(message.id, timestamp, message.body);
  const asymmetric = Buffer.from(serviceKey.sign(content)).toString('base64');
  const signatures = [
    ...hmacKeys.map((key) => `${WEBHOOK_HMAC_VERSION},${webhookHmac(key, content)}`),
    `${WEBHOOK_SIGNATURE_VERSION},${asymmetric}`,
  ];
  return {
    [WEBHOOK_HEADERS.id]: message.id,
    [WEBHOOK_HEADERS.timestamp]: timestamp,
    [WEBHOOK_HEADERS.signature]: signatures.join(' '),
  };
}
