import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { listDevices } from '../../rules/devices/devices.js';
import { listRollouts, pauseRollout, resumeRollout } from '../../rules/rollouts/rollouts.js';
import { type ConsoleDeps, operatorOf } from './console-access.js';
import { ControllersPage } from './controllers-page.js';
import { RolloutsPage } from './rollouts-page.js';

/** The fleet in the console (docs/design.md section 12.4.2): the controllers, the rollouts, pause and resume. */
const rolloutParams = z.object({
  id: z.coerce.number().int().positive().max(MAX_ID),
  move: z.enum(['pause', 'resume']),
});

export async function fleetRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/console/controllers', async (request, reply) =>
    sendPage(
      reply,
      <ControllersPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        devices={await listDevices(ctx)}
      />,
    ),
  );

  app.get('/console/rollouts', async (request, reply) =>
    sendPage(
      reply,
      <RolloutsPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        rollouts={await listRollouts(ctx)}
      />,
    ),
  );

  app.post('/console/rollouts/:id/:move', async (request, reply) => {
    const params = rolloutParams.safeParse(request.params);
    if (!params.success) throw new ApiError('not_found', { message: 'There is no rollout at this address.' });
    const { id, move } = params.data;
    await (move === 'pause' ? pauseRollout(ctx, id) : resumeRollout(ctx, id));
    return reply.redirect('/console/rollouts', 303);
  });
}
