import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../context.js';
import { databaseOutage } from '../db/database-outage.js';
import { dropRefusedHeaders, logFailure, toApiError } from '../http/errors.js';
import { type CookiePolicy, cookiePolicy } from './cookies.js';
import { ErrorPage } from './error-page.js';
import { type PageContext, sendPage } from './page.js';
import { securityHeaders } from './security-headers.js';
import { findSession, type Session } from './sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in customer of a web page's request, or null. */
    customer: Session | null;
    /**
     * The reader may look at this page and change nothing (a company's viewer, docs/design.md section 11.1):
     * set by the route's own access check, and the page leaves its forms out.
     */
    lookOnly: boolean;
  }
}

/** Forms carry a few short fields; nothing a person types into them comes near this. */
const FORM_BODY_LIMIT = 16 * 1024;

/**
 * What every web page stands on (docs/design.md section 10): form bodies, cookies, the security headers with a
 * Content-Security-Policy that allows no inline script or style, CSRF protection on every state change, the
 * signed-in customer from the session cookie, and errors as pages. Registered around the page routes only: the
 * company API keeps its own JSON contract, and the static files (assets-plugin.ts) need no session.
 */
export async function webFoundation(app: FastifyInstance, ctx: CloudContext): Promise<CookiePolicy> {
  const policy = cookiePolicy(ctx.baseUrl());
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  await app.register(cookie);
  await securityHeaders(app, policy.secure);
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: policy.csrfName,
    cookieOpts: { ...policy.options, signed: false },
  });

  app.decorateRequest('customer', null);
  app.decorateRequest('lookOnly', false);
  app.addHook('onRequest', async (request) => {
    const token = request.cookies[policy.sessionName];
    request.customer = token ? await findSession(ctx, token) : null;
  });
  app.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    checkOrigin(request, ctx.baseUrl());
    await new Promise<void>((resolve, reject) => {
      app.csrfProtection(request, reply, (error?: Error) => (error ? reject(csrfRefusal()) : resolve()));
    });
  });
  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    // @fastify/csrf-protection answers a missing or wrong token itself, with errors coded FST_CSRF_*.
    const apiError = 'code' in error && error.code.startsWith('FST_CSRF') ? csrfRefusal() : toApiError(error);
    logFailure(request, apiError, error, databaseOutage(ctx));
    dropRefusedHeaders(reply);
    if (apiError.headers) reply.headers(apiError.headers);
    if (!wantsPage(request)) return reply.code(apiError.status).send(apiError.toBody());
    return sendErrorPage(request, reply, apiError);
  });
  return policy;
}

/** Renders an error as a page, for browsers; `status` from the error table. */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const page: PageContext = { customer: request.customer ?? null, csrfToken: reply.generateCsrf?.() ?? '' };
  return sendPage(
    reply,
    ErrorPage({ page, status: error.status, message: error.message, requestId: request.id }),
    error.status,
  );
}

/** A browser's navigation asks for HTML; the passkey script's calls ask for JSON and get the JSON contract. */
function wantsPage(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * Browsers send Origin with every cross-site POST; a state change from another origin is refused before the
 * CSRF token is even looked at (docs/design.md section 10).
 */
function checkOrigin(request: FastifyRequest, baseUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(baseUrl).origin) throw csrfRefusal();
}

function csrfRefusal(): ApiError {
  return new ApiError('csrf_failed');
}
