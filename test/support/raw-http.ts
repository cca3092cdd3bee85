import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * HTTP/1.1 over a plain socket, for what `inject` and `fetch` cannot send: malformed request lines, control
 * characters in headers, wrong content lengths, broken chunked bodies, bytes trickled one at a time.
 */

export interface RawResponse {
  status: number;
  /** Lowercased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  /** Every complete response, in order. */
  responses: RawResponse[];
  /** Bytes after the last complete response (a cut-off answer), as latin-1. */
  rest: string;
  /** The connection closed (by either side) before `sendRaw` gave up on it. */
  closed: boolean;
}

/** How long the server may stay silent before the client ends its side, and how long it waits in all. */
export interface RawOptions {
  quietMs?: number;
  deadlineMs?: number;
  /** The request is a HEAD: its response has headers only. */
  head?: boolean;
  /** End the client's side at once after writing, as some clients do after their last request. */
  halfClose?: boolean;
}

/**
 * Writes `bytes`, reads until the server closes. When the server keeps the connection open and says nothing
 * for `quietMs`, the client ends its side, so that the server answers what it has (or refuses what is
 * incomplete) and closes.
 */
export async function sendRaw(
  port: number,
  bytes: Buffer | string,
  options: RawOptions = {},
): Promise<RawExchange> {
  const socket = await open(port);
  const received: Buffer[] = [];
  let lastData = Date.now();
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received.push(chunk);
    lastData = Date.now();
  });
  socket.on('error', () => {});
  const closing = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closing.then(() => {
    closed = true;
  });
  if (options.halfClose) socket.end(bytes);
  else socket.write(bytes);
  await untilClosedOrQuiet(
    () => closed,
    () => lastData,
    options.quietMs ?? 150,
    options.deadlineMs ?? 5000,
    socket,
  );
  socket.destroy();
  return { ...parseResponses(Buffer.concat(received), options.head ?? false), closed };
}

async function untilClosedOrQuiet(
  isClosed: () => boolean,
  lastData: () => number,
  quietMs: number,
  deadlineMs: number,
  socket: Socket,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let ended = false;
  while (!isClosed() && Date.now() < deadline) {
    await sleep(10);
    if (!ended && Date.now() - lastData() >= quietMs) {
      socket.end();
      ended = true;
    }
  }
}

export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Splits a byte stream into HTTP/1.1 responses (Content-Length or chunked bodies). */
export function parseResponses(data: Buffer, head = false): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine = '', ...lines] = data.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const body =
      head && bodyless(data, end + 4) ? { text: '', next: end + 4 } : readBody(data, end + 4, headers);
    if (!body) break;
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: body.text });
    at = body.next;
  }
  return { responses, rest: data.subarray(at).toString('latin1') };
}

/**
 * Whether the answer to a HEAD request ends at its headers: it does, unless the parser refused the request
 * before its method was known, and the refusal came with its body.
 */
function bodyless(data: Buffer, start: number): boolean {
  return start >= data.length || data.subarray(start, start + 5).toString('latin1') === 'HTTP/';
}

function readBody(
  data: Buffer,
  start: number,
  headers: Record<string, string>,
): { text: string; next: number } | null {
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') return readChunked(data, start);
  const length = Number(headers['content-length'] ?? 0);
  if (data.length < start + length) return null;
  return { text: data.subarray(start, start + length).toString('utf8'), next: start + length };
}

function readChunked(data: Buffer, start: number): { text: string; next: number } | null {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) {
      const trailerEnd = data.indexOf('\r\n', lineEnd + 2);
      if (trailerEnd < 0) return null;
      return { text: Buffer.concat(parts).toString('utf8'), next: trailerEnd + 2 };
    }
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * A slow client: writes `atOnce`, then `slowly` one byte every `intervalMs`, until it has sent it all or the
 * server closes the connection. `exchange` resolves with what the server answered once the connection closed.
 */
export async function trickle(
  port: number,
  bytes: { atOnce?: string; slowly: string },
  intervalMs: number,
): Promise<{ exchange: Promise<RawExchange>; isOpen: () => boolean }> {
  const slowly = Buffer.from(bytes.slowly);
  const socket = await open(port);
  const received: Buffer[] = [];
  let connected = true;
  let at = 0;
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', () => {});
  if (bytes.atOnce) socket.write(bytes.atOnce);
  const timer = setInterval(() => {
    if (at < slowly.length) socket.write(slowly.subarray(at, ++at));
  }, intervalMs);
  const exchange = new Promise<RawExchange>((resolve) => {
    socket.once('close', () => {
      connected = false;
      clearInterval(timer);
      resolve({ ...parseResponses(Buffer.concat(received)), closed: true });
    });
  });
  return { exchange, isOpen: () => connected };
}
