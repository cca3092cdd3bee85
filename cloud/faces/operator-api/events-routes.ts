import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CloudContext } from '../../foundation/context.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { getCompany } from '../../rules/companies/companies.js';
import {
  deliveryLog,
  describeAttempt,
  describeEndpoint,
  endpointState,
} from '../../rules/events/delivery-log.js';

/**
 * `GET /ops/companies/:id/events` (cloud/README.md, "Operator API"; docs/design.md section 6): a company's callback
 * endpoint and its delivery log, newest first, for `gatelink-admin events --company ID`. Registered by
 * ./routes.ts behind the operator token.
 */
const params = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const query = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export async function eventsRoutes(app: FastifyInstance, ctx: CloudContext): Promise<void> {
  app.get('/ops/companies/:id/events', async (request) => {
    const { id } = validate(params, request.params);
    const { before, limit } = validate(query, request.query);
    await getCompany(ctx, id);
    const [endpoint, deliveries] = await Promise.all([
      endpointState(ctx, id),
      deliveryLog(ctx, id, { before, limit }),
    ]);
    return { endpoint: describeEndpoint(endpoint), deliveries: deliveries.map(describeAttempt) };
  });
}
