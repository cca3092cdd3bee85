import webPush from 'web-push';
import type { VapidKey } from '../../rules/vapid-key/vapid-key-file.js';
import { type PublicPostConnection, postOnce } from '../outbound-http/public-post.js';
import { vapidAuthorization } from './vapid-authorization.js';

/**
 * One Web Push request (docs/design.md section 10.6). The `web-push` package makes it: the payload encrypted
 * `aes128gcm` to the subscription's keys (RFC 8291) and the VAPID JWT signed with the cloud's key (RFC 8292).
 * It is sent as the callbacks are (cloud/links/outbound-http/public-post.ts), not by the package: only to public addresses, checked on the address actually connected to, with a deadline for
 * the answer's head; the body is not read.
 */
export type PushConnection = PublicPostConnection;

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface PushResult {
  status: number | null;
  /** Why it failed, in a sentence for the outbox row; null when the push service took it. */
  error: string | null;
}

/** How long a push service keeps a notification for a device that is off: a day, then the journal says it. */
export const PUSH_TTL_SECONDS = 24 * 3600;

export async function postPush(
  target: PushTarget,
  payload: string,
  signer: { vapid: VapidKey; subject: string },
  connection: PushConnection,
  stop?: AbortSignal,
): Promise<PushResult> {
  const url = URL.parse(target.endpoint);
  if (
    !url ||
    (url.protocol !== 'https:' && !(connection.allowPrivateAddresses && url.protocol === 'http:'))
  ) {
    return { status: null, error: 'the endpoint is not an https URL' };
  }
  const details = webPush.generateRequestDetails(
    { endpoint: url.href, keys: { p256dh: target.p256dh, auth: target.auth } },
    payload,
    // The VAPID header is signed once per push service for many pushes (./vapid-authorization.ts), not here.
    { contentEncoding: 'aes128gcm', TTL: PUSH_TTL_SECONDS, urgency: 'normal' },
  );
  const headers = Object.fromEntries(
    Object.entries(details.headers).map(([name, value]) => [name, String(value)]),
  );
  headers.Authorization = vapidAuthorization(url.origin, signer);
  const answer = await postOnce(url, { headers, body: details.body }, connection, stop);
  switch (answer.kind) {
    case 'answered':
      if (answer.status >= 200 && answer.status < 300) return { status: answer.status, error: null };
      return { status: answer.status, error: `the push service answered ${answer.status}` };
    case 'timed out':
      return { status: null, error: `no answer within ${connection.timeoutMs} ms` };
    case 'refused':
      return { status: null, error: `refused to connect: ${answer.hostname} is not a public address` };
    case 'failed':
      return { status: null, error: answer.code ? `could not connect: ${answer.code}` : 'could not connect' };
  }
}
