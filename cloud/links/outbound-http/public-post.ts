import type { IncomingMessage } from 'node:http';
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
 * answer's head must arrive within the timeout; of its body at most `answerBytes` are read, within the same
 * timeout, and the connection is closed instead of reading on. What the answer means is the caller's to say.
 */
export interface PublicPostConnection {
  /** Development and tests only: every address and plain http are allowed. */
  allowPrivateAddresses: boolean;
  /** How long an attempt may take, until the answer's status arrives. */
  timeoutMs: number;
  resolve?: Resolver;
  connect?: Connector;
}

/** What is kept of an answer's head and body for a reader: bounded, since the answer is someone else's. */
export interface AnswerSample {
  /** The first `MAX_HEADERS` headers, names and values cut to their first `MAX_HEADER_CHARS`. */
  headers: [string, string][];
  /** The first `answerBytes` of the body, read as UTF-8. */
  body: string;
  /** The body went on past what was read (or the deadline cut it short). */
  cut: boolean;
}

const MAX_HEADERS = 30;
const MAX_HEADER_CHARS = 256;

/**
 * A NUL, which PostgreSQL's text and jsonb cannot hold: left in, a receiver's answer would fail the write of the
 * whole turn, and its events would be sent again and again.
 */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

export type PostAnswer =
  | { kind: 'answered'; status: number; location: string | undefined; sample: AnswerSample | null }
  | { kind: 'timed out' }
  | { kind: 'refused'; hostname: string; addresses: readonly string[] }
  | { kind: 'failed'; code: string | null; message: string };

export async function postOnce(
  url: URL,
  request: { headers: Record<string, string>; body: string | Buffer; answerBytes?: number },
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
    // The status is all an attempt needs; past the sample asked for, the connection is closed rather than read.
    const sample = request.answerBytes ? await sampleOf(response, request.answerBytes, signal) : null;
    response.destroy();
    return {
      kind: 'answered',
      status: response.statusCode ?? 0,
      location: response.headers.location,
      sample,
    };
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

/**
 * The answer's headers and its first `bytes`, for the delivery log (docs/design.md section 6). Never fails: an
 * answer that breaks off, or the deadline, ends the sample with what had arrived, as the status already has.
 */
function sampleOf(response: IncomingMessage, bytes: number, signal: AbortSignal): Promise<AnswerSample> {
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < response.rawHeaders.length && headers.length < MAX_HEADERS; i += 2) {
    headers.push([
      storable(response.rawHeaders[i]!.slice(0, MAX_HEADER_CHARS)),
      storable(response.rawHeaders[i + 1]!.slice(0, MAX_HEADER_CHARS)),
    ]);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (cut: boolean) => {
      if (done) return;
      done = true;
      response.off('data', onData);
      response.off('end', onEnd);
      response.off('error', onCut);
      response.off('aborted', onCut);
      signal.removeEventListener('abort', onCut);
      resolve({ headers, body: storable(Buffer.concat(chunks).subarray(0, bytes).toString('utf8')), cut });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > bytes) finish(true);
    };
    const onEnd = () => finish(false);
    const onCut = () => finish(true);
    if (signal.aborted) return finish(true);
    response.on('data', onData);
    response.once('end', onEnd);
    response.once('error', onCut);
    response.once('aborted', onCut);
    signal.addEventListener('abort', onCut, { once: true });
  });
}
