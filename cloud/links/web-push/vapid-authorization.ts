import webPush from 'web-push';
import type { VapidKey } from '../../rules/vapid-key/vapid-key-file.js';

/**
 * The `Authorization` header of a Web Push request (RFC 8292): a JWT signed with the VAPID key for the push
 * service's origin, valid 12 hours, and the key. Signing it, the PEM conversion the `web-push` package does on
 * the way included, cost about two thirds of a push's time in the cloud, and it names only the push service,
 * never the browser: so one is kept per origin and signed again once an hour has passed, well inside its
 * validity (a push service refuses one that expired, or one valid for more than 24 hours).
 */
const VALID_S = 12 * 3600;
const RENEW_AFTER_MS = 3600_000;
/** Origins come from browsers' subscriptions: a bound, so that many of them cannot grow the cache without end. */
const MAX_ORIGINS = 1000;

interface Signed {
  header: string;
  signedAt: number;
}

const signed = new Map<string, Signed>();

export function vapidAuthorization(
  origin: string,
  signer: { vapid: VapidKey; subject: string },
  now = Date.now(),
): string {
  const key = `${origin} ${signer.subject} ${signer.vapid.publicKey}`;
  const held = signed.get(key);
  if (held && now - held.signedAt < RENEW_AFTER_MS) return held.header;
  const { vapid, subject } = signer;
  const expiry = Math.floor(now / 1000) + VALID_S;
  const { Authorization } = webPush.getVapidHeaders(
    origin,
    subject,
    vapid.publicKey,
    vapid.privateKey,
    'aes128gcm',
    expiry,
  );
  if (signed.size >= MAX_ORIGINS) signed.clear();
  signed.set(key, { header: Authorization, signedAt: now });
  return Authorization;
}
