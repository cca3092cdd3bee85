import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ACTIONS } from '../../../shared/company-api/calls.js';
import { ERRORS } from '../../../shared/errors.js';
import type { CloudMetrics } from './cloud-metrics.js';

/**
 * Counts each answer of the company API by action and answer code, and times each `open` (docs/design.md
 * section 8.1). The code is read from the body as it is serialized, whether a route sent it (a stored
 * idempotent answer too) or the error handler did; only the known actions and codes are labels, so that a
 * caller cannot make new series.
 */
export function countCompanyAnswers(app: FastifyInstance, metrics: CloudMetrics): void {
  const codes = new WeakMap<FastifyRequest, string>();
  app.addHook('preSerialization', async (request, reply, payload) => {
    codes.set(request, answerCode(reply.statusCode, payload));
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.companyAnswer({
      action: actionOf(request.query),
      code: codes.get(request) ?? answerCode(reply.statusCode, undefined),
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
}

function actionOf(query: unknown): string {
  const action = (query as Record<string, unknown> | undefined)?.a;
  return typeof action === 'string' && (ACTIONS as readonly string[]).includes(action) ? action : 'unknown';
}

function answerCode(status: number, payload: unknown): string {
  if (status < 400) return 'ok';
  const code = (payload as { error?: unknown } | undefined)?.error;
  return typeof code === 'string' && Object.hasOwn(ERRORS, code) ? code : 'unknown';
}
