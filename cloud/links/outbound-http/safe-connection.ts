import { lookup as dnsLookup } from 'node:dns/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { isPublicAddress } from '../../rules/domain-keys/public-address.js';

/**
 * The connection a key file is fetched over (keyfile-fetch.ts), an event is delivered over
 * (cloud/links/event-delivery/callback-post.ts) and a notification is pushed over (cloud/links/web-push/push-post.ts):
 * only to public addresses, checked on the address actually connected to.
 *
 * The address check happens twice. The `lookup` handed to the socket resolves the name once per fetch and gives
 * out only the public answers, so a name whose answer changes between check and connect (DNS rebinding) still
 * connects to the address that was checked. Then, once connected, the socket's `remoteAddress` is checked again
 * before a single byte is sent. IP literal hosts never reach `lookup` in node, so they are checked directly.
 */

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a name resolves to; the default is `dns.promises.lookup(hostname, { all: true })`. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * Opens a TCP connection the way `net.connect` does, using the `lookup` in the options for names. The default
 * is `net.connect`; tests pass one that stands in for the network so nothing leaves the machine.
 */
export type Connector = (options: net.TcpNetConnectOpts) => net.Socket;

/** What a connection needs of the fetch it serves. */
export interface ConnectionContext {
  /** Set in development mode: every address is allowed. */
  devUrlTemplate: string | undefined;
  /** Every address is allowed (tests of event delivery, docs/design.md section 6). */
  allowPrivateAddresses?: boolean;
  resolve: Resolver;
  connect: Connector;
  signal: AbortSignal;
  /** hostname -> the addresses it may be connected to, resolved once per fetch. */
  answers: Map<string, Promise<ResolvedAddress[]>>;
}

const USER_AGENT = 'Gatelink-KeyFetch/1';

/** A host that is, resolves to, or connected to an address that is not public. */
export class AddressRefused extends Error {
  readonly code = 'ENOTPUBLIC';

  constructor(
    readonly hostname: string,
    readonly addresses: readonly string[],
    readonly stage: 'literal' | 'dns' | 'connect',
  ) {
    super(`${hostname}: no public address (${addresses.join(', ')})`);
  }
}

export async function defaultResolve(hostname: string): Promise<ResolvedAddress[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

/** A GET of `url` over a connection made and checked here; resolves with the response once its head arrives. */
export function requestKeyFile(url: URL, ctx: ConnectionContext): Promise<http.IncomingMessage> {
  return checkedRequest(url, ctx, {
    method: 'GET',
    headers: { Accept: 'application/json', 'User-Agent': USER_AGENT, Connection: 'close' },
  });
}

/**
 * A request of `url` over a connection made and checked here, one connection per request; resolves with the
 * response once its head arrives. Redirects are not followed: the caller reads the status.
 */
export function checkedRequest(
  url: URL,
  ctx: ConnectionContext,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Uint8Array },
): Promise<http.IncomingMessage> {
  checkLiteralHost(url, ctx);
  const send: typeof http.request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: init.method,
      defaultPort: url.protocol === 'https:' ? 443 : 80,
      // No agent: no pooled sockets and no proxy; every connection is made and checked by `openConnection`.
      createConnection: (_options, oncreate) => openConnection(url, ctx, oncreate),
      headers: init.headers,
      signal: ctx.signal,
    });
    req.once('response', resolve);
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Whether the address checks apply: not in development mode. */
function checksAddresses(ctx: ConnectionContext): boolean {
  return ctx.devUrlTemplate === undefined && ctx.allowPrivateAddresses !== true;
}

/** IP literal hosts skip `lookup`, so they are checked here. */
function checkLiteralHost(url: URL, ctx: ConnectionContext): void {
  if (!checksAddresses(ctx)) return;
  const host = bareHost(url);
  if (net.isIP(host) && !isPublicAddress(host)) throw new AddressRefused(host, [host], 'literal');
}

/**
 * Connects, checks the address actually connected to, and only then hands the socket (wrapped in TLS for
 * https) to the request, so nothing is written to a refused address.
 */
function openConnection(
  url: URL,
  ctx: ConnectionContext,
  oncreate: (err: Error | null, socket: Duplex) => void,
): undefined {
  const host = bareHost(url);
  const secure = url.protocol === 'https:';
  const socket = ctx.connect({
    host,
    port: Number(url.port) || (secure ? 443 : 80),
    lookup: checkedLookup(ctx),
    autoSelectFamily: true,
  });
  const onAbort = () => socket.destroy(new Error('deadline passed'));
  const onError = (error: Error) => {
    ctx.signal.removeEventListener('abort', onAbort);
    oncreate(error, socket);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  socket.once('error', onError);
  socket.once('connect', () => {
    ctx.signal.removeEventListener('abort', onAbort);
    socket.off('error', onError);
    const remote = socket.remoteAddress ?? '';
    if (checksAddresses(ctx) && !isPublicAddress(remote)) {
      socket.destroy();
      oncreate(new AddressRefused(host, [remote], 'connect'), socket);
      return;
    }
    if (!secure) {
      oncreate(null, socket);
      return;
    }
    const servername = net.isIP(host) ? undefined : host;
    const tlsSocket = tls.connect({ socket, host, servername, ALPNProtocols: ['http/1.1'] });
    socket.on('error', (error) => tlsSocket.destroy(error));
    oncreate(null, tlsSocket);
  });
  return undefined;
}

/**
 * A `lookup` for `net.connect` that resolves each name once per fetch and hands out only its public addresses
 * (all of them in development mode), in whichever of node's two callback shapes is asked for.
 */
function checkedLookup(ctx: ConnectionContext): net.LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, ctx).then(
      (answers) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
        const first = usable[0];
        if (!first) {
          callback(noAddress(hostname), '');
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: Error) => callback(error, ''),
    );
  };
}

function checkedAddresses(hostname: string, ctx: ConnectionContext): Promise<ResolvedAddress[]> {
  let answer = ctx.answers.get(hostname);
  if (!answer) {
    answer = ctx.resolve(hostname).then((all) => {
      const addresses = all.map(({ address, family }) => ({ address, family }));
      if (addresses.length === 0) throw noAddress(hostname);
      if (!checksAddresses(ctx)) return addresses;
      const usable = addresses.filter(({ address }) => isPublicAddress(address));
      if (usable.length === 0) {
        const refused = addresses.map(({ address }) => address);
        throw new AddressRefused(hostname, refused, 'dns');
      }
      return usable;
    });
    ctx.answers.set(hostname, answer);
  }
  return answer;
}

function noAddress(hostname: string): Error {
  return Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
}

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}
