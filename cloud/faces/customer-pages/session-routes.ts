import type { FastifyInstance } from 'fastify';
import { endSession } from '../../foundation/web/sessions.js';
import type { WebDeps } from '../../foundation/web/web-deps.js';
import { forgetPendingCode } from './pending-code.js';

/**
 * Signing out ends this browser's session in the database, so no instance accepts its cookie again, and
 * forgets any e-mail code it waited for.
 */
export async function sessionRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.post('/signout', async (request, reply) => {
    if (request.customer) await endSession(deps.ctx, request.customer.idHash);
    reply.clearCookie(deps.cookies.sessionName, { path: '/' });
    forgetPendingCode(deps, request, reply);
    return reply.redirect('/signin?signed_out=1', 303);
  });
}
