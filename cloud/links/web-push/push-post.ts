import * as net from 'node:net';
import webPush from 'web-push';
import type { VapidKey } from '../../rules/vapid-key/vapid-key-file.js';
import {
  AddressRefused,
  type Connector,
  checkedRequest,
  defaultResolve,
  type Resolver,
} from '../outbound-http/safe-connection.js';

/**
 * One Web Push request (docs/design.md section 10.6). The `web-push` package makes it: the payload encrypted
 * `aes128gcm` to the subscription's keys (RFC 8291) and the VAPID JWT signed with the cloud's key (RFC 8292).
 * It is sent over the callbacks' connection machinery (cloud/links/outbound-http/safe-connection.ts), not the
 * package's own: only to public addresses, checked on the address actually connected to, with a deadline for
 * the answer's head; the body is not read.
 */
export interface PushConnection {
  /** Development and tests only: every address and plain http are allowed. */
  allowPrivateAddresses: boolean;
  /** How long an attempt may take, until the answer's status arrives. */
  timeoutMs: number;
  resolve?: Resolver;
  connect?: Connector;
}

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
    {
      vapidDetails: {
        subject: signer.subject,
        publicKey: signer.vapid.publicKey,
        privateKey: signer.vapid.privateKey,
      },
      contentEncoding: 'aes128gcm',
      TTL: PUSH_TTL_SECONDS,
      urgency: 'normal',
    },
  );
  const headers = Object.fromEntries(
    Object.entries(details.headers).map(([name, value]) => [name, String(value)]),
  );
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), connection.timeoutMs);
  const signal = stop ? AbortSignal.any([deadline.signal, stop]) : deadline.signal;
  try {
    const response = await checkedRequest(
      url,
      {
        devUrlTemplate: undefined,
        allowPrivateAddresses: connection.allowPrivateAddresses,
        resolve: connection.resolve ?? defaultResolve,
        connect: connection.connect ?? net.connect,
        signal,
        answers: new Map(),
      },
      { method: 'POST', headers: { ...headers, Connection: 'close' }, body: details.body },
    );
    response.destroy();
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return { status, error: null };
    return { status, error: `the push service answered ${status}` };
  } catch (error) {
    if (deadline.signal.aborted)
      return { status: null, error: `no answer within ${connection.timeoutMs} ms` };
    if (error instanceof AddressRefused) {
      return { status: null, error: `refused to connect: ${error.hostname} is not a public address` };
    }
    const code = (error as { code?: unknown }).code;
    return {
      status: null,
      error: typeof code === 'string' ? `could not connect: ${code}` : 'could not connect',
    };
  } finally {
    clearTimeout(timer);
  }
}
