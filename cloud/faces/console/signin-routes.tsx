import type { FastifyInstance } from 'fastify';
import { type AttemptLimit, limitPerAddress } from '../../foundation/web/attempt-limit.js';
import { textField } from '../../foundation/web/form-input.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import {
  endOperatorSession,
  isOperatorToken,
  OPERATOR_SESSION_MS,
  startOperatorSession,
} from '../../rules/operators/operator-sessions.js';
import { type ConsoleDeps, consoleCookieName, findConsoleOperator } from './console-access.js';
import { SigninPage } from './signin-page.js';

/**
 * Signing in to the console with the operator token, and out (docs/design.md section 11.5). The token is
 * compared in constant time; attempts are limited per client address, counted in the database so that the limit
 * holds across instances, and every attempt counts, so a guesser cannot hide among successes.
 */
export const CONSOLE_SIGNIN: AttemptLimit = {
  bucket: 'console-signin',
  max: 10,
  windowMs: 3600_000,
  message: (wait) => `Too many sign-in attempts from here; try again in ${wait}.`,
};

export async function signinRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { ctx } = deps;
  const cookieName = consoleCookieName(deps.cookies);

  app.get('/console/signin', async (request, reply) => {
    if (await findConsoleOperator(deps, request)) return reply.redirect('/console', 303);
    return sendPage(reply, <SigninPage page={pageContext(request, reply)} />);
  });

  app.post(
    '/console/signin',
    { preHandler: limitPerAddress(ctx, CONSOLE_SIGNIN) },
    async (request, reply) => {
      const token = textField(request.body, 'token');
      if (!isOperatorToken(token, deps.operatorToken)) {
        const message = token ? 'This is not the operator token.' : 'Enter the operator token.';
        return sendPage(
          reply,
          <SigninPage page={pageContext(request, reply)} errors={{ token: message }} />,
          401,
        );
      }
      // A session this browser had is dropped: one planted before sign-in is worth nothing after it.
      const previous = request.cookies[cookieName];
      if (previous) await endOperatorSession(ctx, previous);
      const session = await startOperatorSession(ctx);
      reply.setCookie(cookieName, session, { ...deps.cookies.options, maxAge: OPERATOR_SESSION_MS / 1000 });
      return reply.redirect('/console', 303);
    },
  );

  // Open to anyone: it only ends the session the browser's own cookie names.
  app.post('/console/signout', async (request, reply) => {
    const token = request.cookies[cookieName];
    if (token) await endOperatorSession(ctx, token);
    reply.clearCookie(cookieName, deps.cookies.options);
    return reply.redirect('/console/signin', 303);
  });
}
