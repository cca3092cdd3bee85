import * as net from 'node:net';
import {
  AddressRefused,
  type Connector,
  checkedRequest,
  defaultResolve,
  type Resolver,
} from './safe-connection.js';

/**
 * One POST to an address the cloud was given by someone else (a company's callback, a browser's push service;
 * docs/design.md sections 6 and 10.6), over a connection of its own made by ./safe-connection.ts: only to public
 * addresses, checked on the address actually connected to, at every attempt. No redirect is followed. The
 * answer's head must arrive within the timeout; its body is not read, the connection is closed instead. What
 * the answer means is the caller's to say.
 */
export interface PublicPostConnection {
  /** Development and tests only: every address and plain http are allowed. */
  allowPrivateAddresses: boolean;
  /** How long an attempt may take, until the answer's status arrives. */
  timeoutMs: number;
  resolve?: Resolver;
  connect?: Connector;
}

export type PostAnswer =
  | { kind: 'answered'; status: number; location: string | undefined }
  | { kind: 'timed out' }
  | { kind: 'refused'; hostname: string; addresses: readonly string[] }
  | { kind: 'failed'; code: string | null; message: string };

export async function postOnce(
  url: URL,
  request: { headers: Record<string, string>; body: string | Buffer },
  connection: PublicPostConnection,
  stop?: AbortSignal,
): Promise<PostAnswer> {
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
      { method: 'POST', headers: { ...request.headers, Connection: 'close' }, body: request.body },
    );
    // The status is all an attempt needs; the connection is closed rather than its body read.
    response.destroy();
    return { kind: 'answered', status: response.statusCode ?? 0, location: response.headers.location };
  } catch (error) {
    if (deadline.signal.aborted) return { kind: 'timed out' };
    if (error instanceof AddressRefused) {
      return { kind: 'refused', hostname: error.hostname, addresses: error.addresses };
    }
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'failed', code: typeof code === 'string' ? code : null, message };
  } finally {
    clearTimeout(timer);
  }
}
