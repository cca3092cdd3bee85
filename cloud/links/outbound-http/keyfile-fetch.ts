import type * as http from 'node:http';
import * as net from 'node:net';
import { domainToASCII } from 'node:url';
import { asciiDomainProblem, displayDomain } from '../../rules/companies/domains.js';
import type { KeyFileFailure, KeyFileResult } from '../../rules/domain-keys/key-file.js';
import { parseKeyFile } from '../../rules/domain-keys/keyfile-parse.js';
import { nonPublicRange, parseAddress } from '../../rules/domain-keys/public-address.js';
import {
  AddressRefused,
  type ConnectionContext,
  type Connector,
  defaultResolve,
  type Resolver,
  requestKeyFile,
} from './safe-connection.js';

/**
 * Fetches a company's key file, `https://<domain>/.well-known/service.json` (cloud/README.md, "Signature bound to your domain"), under
 * the rules of docs/design.md section 2, "Key file": a 5 s deadline, at most 4 KiB, no redirects to another host,
 * and only public addresses, checked on the address actually connected to.
 *
 * The connection and its address checks are keyfile-connection.ts; what the file must hold, keyfile-parse.ts.
 *
 * `GATELINK_DEV_KEYFILE_URL` (docs/design.md section 8) becomes `devUrlTemplate`: key files are fetched there
 * instead and the public-address checks are skipped. Everything else (size, deadline, redirects) still holds.
 */

export interface KeyFileFetchOptions {
  /** `GATELINK_DEV_KEYFILE_URL`: a URL with `{domain}` in it; fetched instead, without the public-address checks. */
  devUrlTemplate?: string;
  /** Deadline for the whole fetch, redirects and a slow body included. Default 5000. */
  timeoutMs?: number;
  /** Largest key file accepted, in bytes. Default 4096. */
  maxBytes?: number;
  /** Redirects followed, each to the same scheme, host and port. Default 3. */
  maxRedirects?: number;
  resolve?: Resolver;
  connect?: Connector;
}

export const KEY_FILE_PATH = '/.well-known/service.json';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches and strictly checks a company's public key. Every problem with the domain, the network or the file
 * comes back as `{ ok: false, reason, message }`, the message written for an operator; only invalid options
 * (a bad template, a non-positive limit) throw.
 */
export async function fetchKeyFile(
  domain: string,
  options: KeyFileFetchOptions = {},
): Promise<KeyFileResult> {
  const settings = readOptions(options);
  const name = asciiDomain(domain);
  if (typeof name !== 'string') return { ok: false, reason: 'invalid_domain', message: name.message };

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), settings.timeoutMs);
  const ctx: FetchContext = {
    ...settings,
    display: displayDomain(name),
    signal: deadline.signal,
    answers: new Map(),
  };
  let url = keyFileUrl(name, settings.devUrlTemplate);
  try {
    for (let redirects = 0; ; redirects++) {
      const hop = await fetchOnce(url, ctx);
      if (hop.kind === 'body') return parseKeyFile(hop.body, ctx.display);
      url = nextUrl(url, hop.location, redirects, ctx);
    }
  } catch (error) {
    return { ok: false, ...describeFailure(error, url, ctx) };
  } finally {
    clearTimeout(timer);
  }
}

interface Settings {
  devUrlTemplate: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  resolve: Resolver;
  connect: Connector;
}

interface FetchContext extends Settings, ConnectionContext {
  /** The domain as shown to people. */
  display: string;
}

/** A failure whose reason and message are already known. */
class FetchFailure extends Error {
  constructor(
    readonly reason: KeyFileFailure,
    message: string,
  ) {
    super(message);
  }
}

function readOptions(options: KeyFileFetchOptions): Settings {
  const settings: Settings = {
    devUrlTemplate: options.devUrlTemplate,
    timeoutMs: options.timeoutMs ?? 5000,
    maxBytes: options.maxBytes ?? 4096,
    maxRedirects: options.maxRedirects ?? 3,
    resolve: options.resolve ?? defaultResolve,
    connect: options.connect ?? net.connect,
  };
  if (!(settings.timeoutMs > 0 && Number.isFinite(settings.timeoutMs))) {
    throw new RangeError('timeoutMs must be a positive number of milliseconds');
  }
  if (!(Number.isSafeInteger(settings.maxBytes) && settings.maxBytes > 0)) {
    throw new RangeError('maxBytes must be a positive whole number');
  }
  if (!(Number.isSafeInteger(settings.maxRedirects) && settings.maxRedirects >= 0)) {
    throw new RangeError('maxRedirects must be zero or a positive whole number');
  }
  if (settings.devUrlTemplate !== undefined) {
    const url = URL.parse(settings.devUrlTemplate.replaceAll('{domain}', 'acme.example'));
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new TypeError(
        'devUrlTemplate must be an http or https URL, such as http://127.0.0.1:9000/{domain}',
      );
    }
  }
  return settings;
}

/** The domain in lowercase ASCII, or what is wrong with it. */
function asciiDomain(input: string): string | { message: string } {
  const refuse = (why: string) => ({ message: `${JSON.stringify(input)} is not a usable domain: ${why}` });
  if (typeof input !== 'string' || input === '') return refuse('it is empty');
  if (!/^[\x21-\x7e]*$/.test(input)) {
    const ascii = domainToASCII(input);
    return refuse(ascii ? `give it in punycode form, ${ascii}` : 'it holds characters a domain cannot have');
  }
  const name = input.toLowerCase();
  if (parseAddress(name) || name.startsWith('['))
    return refuse('an IP address is not accepted, give a domain');
  const problem = asciiDomainProblem(name);
  if (problem) return refuse(problem);
  return name;
}

function keyFileUrl(domain: string, devUrlTemplate: string | undefined): URL {
  return new URL(
    devUrlTemplate ? devUrlTemplate.replaceAll('{domain}', domain) : `https://${domain}${KEY_FILE_PATH}`,
  );
}

/** The redirect target, if it may be followed: same scheme, host and port, and within the limit. */
function nextUrl(from: URL, location: string | undefined, redirects: number, ctx: FetchContext): URL {
  const where = `${ctx.display}'s key file at ${from.href}`;
  if (!location) throw new FetchFailure('bad_redirect', `${where} answered a redirect without a Location`);
  if (redirects >= ctx.maxRedirects) {
    throw new FetchFailure('bad_redirect', `${where} redirects more than ${ctx.maxRedirects} times`);
  }
  const next = URL.parse(location, from.href);
  if (!next) throw new FetchFailure('bad_redirect', `${where} redirects to ${location}, which is not a URL`);
  if (next.username || next.password) {
    throw new FetchFailure('bad_redirect', `${where} redirects to a URL with credentials in it`);
  }
  if (next.origin !== from.origin) {
    throw new FetchFailure(
      'bad_redirect',
      `${where} redirects to ${next.origin}, another host; serve the key file from ${from.origin} itself`,
    );
  }
  return next;
}

type Hop = { kind: 'body'; body: Buffer } | { kind: 'redirect'; location: string | undefined };

async function fetchOnce(url: URL, ctx: FetchContext): Promise<Hop> {
  const response = await requestKeyFile(url, ctx);
  const status = response.statusCode ?? 0;
  if (REDIRECT_STATUSES.has(status)) {
    response.destroy();
    return { kind: 'redirect', location: response.headers.location };
  }
  if (status !== 200) {
    response.destroy();
    throw new FetchFailure(
      'bad_status',
      `${ctx.display}'s key file at ${url.href} answered HTTP ${status}; it must answer 200 with the key file`,
    );
  }
  return { kind: 'body', body: await readBody(response, ctx) };
}

/** The body, refused as soon as more than `maxBytes` arrive or are announced. */
async function readBody(response: http.IncomingMessage, ctx: FetchContext): Promise<Buffer> {
  const tooLarge = () =>
    new FetchFailure('too_large', `${ctx.display}'s key file is larger than ${formatBytes(ctx.maxBytes)}`);
  const announced = response.headers['content-length'];
  if (announced !== undefined && Number(announced) > ctx.maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const onAbort = () => response.destroy(new Error('deadline passed'));
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > ctx.maxBytes) {
        response.destroy();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (!response.complete) throw new Error('the connection closed before the key file was complete');
  return Buffer.concat(chunks);
}

function describeFailure(
  error: unknown,
  url: URL,
  ctx: FetchContext,
): { reason: KeyFileFailure; message: string } {
  if (error instanceof FetchFailure) return { reason: error.reason, message: error.message };
  if (ctx.signal.aborted) {
    return {
      reason: 'timeout',
      message: `${ctx.display}'s key file at ${url.href} did not arrive within ${formatMs(ctx.timeoutMs)}`,
    };
  }
  if (error instanceof AddressRefused) {
    const addresses = error.addresses
      .slice(0, 3)
      .map((address) => `${address} (${nonPublicRange(address)})`)
      .join(', ');
    const what =
      error.stage === 'connect' ? 'the connection reached' : error.stage === 'dns' ? 'resolves to' : 'is';
    return {
      reason: 'not_public',
      message: `${ctx.display} ${what} ${addresses}, not a public address; the key file must be served publicly`,
    };
  }
  return {
    reason: 'unreachable',
    message: `${ctx.display}'s key file could not be fetched from ${url.href}: ${networkProblem(error)}`,
  };
}

function networkProblem(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA')
    return 'the domain has no address in DNS';
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET') return 'the connection was reset';
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') return 'the host is unreachable';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code))
    return `its TLS certificate was refused (${error.message})`;
  return code ? `${error.message} (${code})` : error.message;
}

function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
