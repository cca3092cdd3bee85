import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CookiePolicy } from '../../foundation/web/cookies.js';
import { sendPage } from '../../foundation/web/page.js';
import type { WebDeps } from '../../foundation/web/web-deps.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import type { CompaniesContext } from '../../rules/companies/companies-context.js';
import { OPERATOR_TOKEN, type OperatorActor } from '../../rules/operators/actions.js';
import { isOperatorSession } from '../../rules/operators/operator-sessions.js';
import { accountActor, isOperatorAccount } from '../../rules/operators/operators.js';
import { RefusedPage } from './signin-page.js';

/**
 * Who may use the console (docs/design.md section 11.5): a browser signed in to the console with the operator
 * token, or a signed-in account listed in `operators`. Everyone else, a signed-in customer or company member
 * included, gets 403 `operator_required` on every console page and post but the sign-in: a page that says how
 * operators sign in, for a browser.
 */
export interface ConsoleDeps extends WebDeps<CompaniesContext> {
  operatorToken: string;
}

export interface ConsoleOperator extends OperatorActor {
  /** Signed in with the token itself: only such a console grants and withdraws operator rights. */
  readonly viaToken: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator of a console request, set before any console route but the sign-in runs. */
    operator: ConsoleOperator | null;
  }
}

/** The console's own cookie, named after the cookie policy (`__Host-` over https, section 10.1). */
export function consoleCookieName(cookies: CookiePolicy): string {
  return cookies.secure ? '__Host-gatelink-console' : 'gatelink-console';
}

export async function findConsoleOperator(
  deps: ConsoleDeps,
  request: FastifyRequest,
): Promise<ConsoleOperator | null> {
  const token = request.cookies[consoleCookieName(deps.cookies)];
  if (token && (await isOperatorSession(deps.ctx, token))) return { ...OPERATOR_TOKEN, viaToken: true };
  const account = request.customer;
  if (account && (await isOperatorAccount(deps.ctx, account.customerId))) {
    return { ...accountActor(account), viaToken: false };
  }
  return null;
}

/** Puts every route registered on `app` behind the operator check. */
export function requireOperator(app: FastifyInstance, deps: ConsoleDeps): void {
  app.decorateRequest('operator', null);
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    request.operator = await findConsoleOperator(deps, request);
    if (request.operator) return;
    if (!(request.headers.accept ?? '').includes('text/html')) throw new ApiError('operator_required');
    return sendPage(reply, <RefusedPage page={pageContext(request, reply)} />, 403);
  });
}

/** The operator of a request that passed `requireOperator`. */
export function operatorOf(request: FastifyRequest): ConsoleOperator {
  if (!request.operator) throw new ApiError('operator_required');
  return request.operator;
}
