import type { FastifyInstance } from 'fastify';
import type { CloudContext } from '../../foundation/context.js';
import { databaseOutage } from '../../foundation/db/database-outage.js';
import type { ControllerLink } from '../../links/controllers/controller-link.js';
import { requireOperatorToken } from './operator-bearer.js';
import { notReady } from './readiness.js';

/** How long `/readyz` waits for the database before it says the database is not ready. */
const READINESS_TIMEOUT_MS = 2000;

/**
 * `GET /metrics` (Prometheus text, behind the operator token like `/ops/`) and `GET /readyz`, and the count of
 * every HTTP answer by route template (docs/design.md section 8.1). Added to the root instance before the other
 * routes, so that its hook counts theirs.
 */
export function registerMetrics(
  app: FastifyInstance,
  deps: { ctx: CloudContext; controllerLink: ControllerLink; operatorToken: string },
): void {
  const { metrics } = deps.ctx;
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpResponse(request.routeOptions.url ?? 'unmatched', reply.statusCode);
  });

  app.get('/metrics', { onRequest: requireOperatorToken(deps.operatorToken) }, async (_request, reply) =>
    reply.type(metrics.contentType).send(await metrics.text()),
  );

  app.get('/readyz', async (_request, reply) => {
    const parts = await notReady({
      db: deps.ctx.db,
      broker: deps.controllerLink,
      timeoutMs: READINESS_TIMEOUT_MS,
    });
    if (!parts.includes('database')) databaseOutage(deps.ctx).answered();
    if (parts.length === 0) return { ok: 1 };
    return reply.code(503).send({ ok: 0, not_ready: parts });
  });
}
