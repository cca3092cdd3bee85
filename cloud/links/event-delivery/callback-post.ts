import * as net from 'node:net';
import {
  AddressRefused,
  type Connector,
  checkedRequest,
  defaultResolve,
  type Resolver,
} from '../outbound-http/safe-connection.js';

/**
 * One attempt to deliver an event (docs/design.md section 6): a POST to the callback address over a connection
 * of its own, made and checked by the key file's machinery (cloud/links/outbound-http/safe-connection.ts): only to
 * public addresses, checked on the address actually connected to, at every attempt, so a name that later
 * resolves to a private address is refused. Only https, and no redirect is followed: a 3xx is a failed attempt
 * like any other answer that is not 2xx. The answer's head must arrive within the timeout; its body is not read.
 */

export interface CallbackConnection {
  /** Development and tests only: every address and plain http are allowed. */
  allowPrivateAddresses: boolean;
  /** How long an attempt may take, until the answer's status arrives. */
  timeoutMs: number;
  resolve?: Resolver;
  connect?: Connector;
}

export interface AttemptResult {
  /** The answer's status, when one came. */
  status: number | null;
  /** Why the attempt failed, in a sentence for the delivery log; null when it was delivered. */
  error: string | null;
}

const USER_AGENT = 'Gatelink-Webhooks/1';

export async function postEvent(
  url: string,
  message: { headers: Record<string, string>; body: string },
  connection: CallbackConnection,
  stop?: AbortSignal,
): Promise<AttemptResult> {
  const target = URL.parse(url);
  if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) {
    return { status: null, error: 'the callback address is not an https URL' };
  }
  if (target.protocol === 'http:' && !connection.allowPrivateAddresses) {
    return { status: null, error: 'the callback address is not https' };
  }
  if (target.username || target.password) {
    return { status: null, error: 'the callback address has credentials in it' };
  }
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), connection.timeoutMs);
  const signal = stop ? AbortSignal.any([deadline.signal, stop]) : deadline.signal;
  try {
    const response = await checkedRequest(
      target,
      {
        devUrlTemplate: undefined,
        allowPrivateAddresses: connection.allowPrivateAddresses,
        resolve: connection.resolve ?? defaultResolve,
        connect: connection.connect ?? net.connect,
        signal,
        answers: new Map(),
      },
      {
        method: 'POST',
        headers: {
          ...message.headers,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(message.body)),
          'User-Agent': USER_AGENT,
          Connection: 'close',
        },
        body: message.body,
      },
    );
    // The status is all an attempt needs; the connection is closed rather than its body read.
    response.destroy();
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return { status, error: null };
    return { status, error: describeStatus(status, response.headers.location) };
  } catch (error) {
    if (deadline.signal.aborted) {
      return { status: null, error: `no answer within ${formatSeconds(connection.timeoutMs)}` };
    }
    return { status: null, error: describeError(error) };
  } finally {
    clearTimeout(timer);
  }
}

function describeStatus(status: number, location: string | undefined): string {
  if (status >= 300 && status < 400) {
    return `answered ${status} (a redirect${location ? ` to ${location.slice(0, 200)}` : ''}): callbacks do not follow redirects, give the final address`;
  }
  return `answered ${status}; only a 2xx status is a delivery`;
}

function describeError(error: unknown): string {
  if (error instanceof AddressRefused) {
    return `refused to connect: ${error.hostname} is not a public address (${error.addresses.join(', ')})`;
  }
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `could not connect: ${code}` : `could not deliver: ${message}`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
