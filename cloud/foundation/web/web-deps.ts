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
  return { customer: request.customer, csrfToken: reply.generateCsrf() };
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

/**
 * Where to go after signing in: only a path on this site (`/c/ABCD...`, `/barriers`), never another host, so a
 * crafted link cannot send a customer elsewhere after they sign in.
 */
export function safeNext(value: unknown, fallback = '/barriers'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\')) {
    return fallback;
  }
  return value.length <= 512 ? value : fallback;
}
