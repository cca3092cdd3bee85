import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../context.js';
import type { CookiePolicy } from './cookies.js';
import type { PageContext } from './page.js';
import type { Session } from './sessions.js';
import { startSession } from './sessions.js';

/**
 * What each group of a page application's routes is handed (cloud/faces/customer-pages/routes.ts and its
 * siblings): the context, narrowed to what that face declares it stands on, and the cookie policy.
 */
export interface WebDeps<Context extends CloudContext = CloudContext> {
  ctx: Context;
  cookies: CookiePolicy;
}

/** The page's context: who is signed in, and the CSRF token its forms carry. */
export function pageContext(request: FastifyRequest, reply: FastifyReply): PageContext {
  return { customer: request.customer, csrfToken: reply.generateCsrf(), lookOnly: request.lookOnly };
}

/**
 * The signed-in customer, or: a page (GET) sends the browser to sign in and come back; any other call is
 * refused with 401 `sign_in_required`. Returns null when the reply was sent.
 */
export function signedIn(request: FastifyRequest, reply: FastifyReply): Session | null {
  if (request.customer) return request.customer;
  if (request.method === 'GET') {
    void reply.redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
    return null;
  }
  throw new ApiError('sign_in_required');
}

/** Signs a customer in on this browser: a new session and its cookie. */
export async function signInBrowser(deps: WebDeps, reply: FastifyReply, customerId: number): Promise<void> {
  const token = await startSession(deps.ctx, customerId);
  reply.setCookie(deps.cookies.sessionName, token, { ...deps.cookies.options, maxAge: 30 * 24 * 3600 });
}

/** The longest `next` kept; a longer one is ignored. */
const NEXT_MAX = 512;
/** Any origin that cannot be this site's: a path resolved against it stays on it, and anything else leaves it. */
const PROBE_ORIGIN = 'https://x.invalid';
/**
 * A backslash (browsers read it as `/`), a control character (C0, DEL, C1), an invisible format character, or
 * white space of any kind: browsers drop TAB, LF and CR from a URL, so `/\t/evil.example` would become
 * `//evil.example`, another host; Node refuses most of the rest in a header, which would be a 500.
 */
const REFUSED_CHARACTERS = /[\\\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\s]/u;

/**
 * Where to go after signing in: only a path on this site (`/c/ABCD...`, `/barriers`), never another host, so a
 * crafted link cannot send a customer elsewhere after they sign in (docs/design.md section 10.2). The value is
 * checked as sent and once percent-decoded, as a browser or a later redirect may read it; anything else, or
 * percent-encoding that does not decode, gives `fallback`, never an error. What comes back is the path as a URL
 * parser writes it, printable ASCII only, so that it can always go in a Location header.
 */
export function safeNext(value: unknown, fallback = '/barriers'): string {
  if (typeof value !== 'string' || value.length > NEXT_MAX) return fallback;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return fallback;
  }
  if (!isSitePath(value) || !isSitePath(decoded)) return fallback;
  const url = new URL(value, PROBE_ORIGIN);
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.length <= NEXT_MAX && /^\/[\x21-\x7e]*$/.test(path) && !path.startsWith('//') ? path : fallback;
}

function isSitePath(value: string): boolean {
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return false;
  if (REFUSED_CHARACTERS.test(value)) return false;
  try {
    return new URL(value, PROBE_ORIGIN).origin === PROBE_ORIGIN;
  } catch {
    return false;
  }
}
