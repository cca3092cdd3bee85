import { z } from 'zod';

/**
 * A browser's push subscription as `PushSubscription.toJSON()` gives it and the account page's script posts it
 * (docs/design.md section 10.6): the push service's endpoint, and the keys its payloads are encrypted to
 * (RFC 8291): the browser's P-256 public key (65 bytes, uncompressed) and its 16-byte auth secret, each in
 * base64url. Checked here at the edge, before anything is looked up or stored.
 */
export const MAX_ENDPOINT_LENGTH = 2048;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function base64urlOf(bytes: number, check: (decoded: Buffer) => boolean = () => true) {
  return z
    .string()
    .max(128)
    .regex(BASE64URL, 'must be base64url')
    .refine((text) => {
      const decoded = Buffer.from(text, 'base64url');
      return decoded.length === bytes && check(decoded);
    }, `must be ${bytes} bytes in base64url`);
}

export const subscriptionShape = z.object({
  endpoint: z
    .string()
    .max(MAX_ENDPOINT_LENGTH)
    .refine((text) => URL.canParse(text), 'must be a URL'),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({
    // An uncompressed point starts with 4.
    p256dh: base64urlOf(65, (point) => point[0] === 4),
    auth: base64urlOf(16),
  }),
});

export type SubscriptionShape = z.infer<typeof subscriptionShape>;
