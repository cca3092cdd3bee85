import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CloudContext } from '../../foundation/context.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { getCompany } from '../../rules/companies/companies.js';
import {
  deliveryLog,
  describeAttempt,
  describeEndpoint,
  endpointStates,
} from '../../rules/events/delivery-log.js';
import { heldEvents } from '../../rules/events/held-events.js';

/**
 * `GET /ops/companies/:id/events` (cloud/README.md, "Operator API"; docs/design.md sections 6 and 6.2): a
 * company's endpoints and its delivery log, newest first, for `gatelink-admin events --company ID`. Registered
 * by ./routes.ts behind the operator token.
 *
 * `endpoints` has each endpoint; `endpoint` is still the first one's, as before a company had several, or with
 * none the shape it had without a callback address (no address, the events kept waiting for one), so that a
 * reader written for one address reads on. Each attempt carries the address it was made to (`url`), and
 * `endpoint` (an id) filters the log to one endpoint's attempts.
 */
const params = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const query = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  endpoint: z.coerce.number().int().positive().max(MAX_ID).optional(),
});

export async function eventsRoutes(app: FastifyInstance, ctx: CloudContext): Promise<void> {
  app.get('/ops/companies/:id/events', async (request) => {
    const { id } = validate(params, request.params);
    const { before, limit, endpoint } = validate(query, request.query);
    await getCompany(ctx, id);
    const [states, deliveries] = await Promise.all([
      endpointStates(ctx, id),
      deliveryLog(ctx, id, { before, limit, endpoint }),
    ]);
    const endpoints = states.map(describeEndpoint);
    const held = endpoints.length === 0 ? await heldEvents(ctx, id) : null;
    return {
      endpoint: endpoints[0] ?? {
        url: null,
        failing_since: null,
        paused_until: null,
        last_error: null,
        kinds: null,
        waiting: held?.count ?? 0,
        retrying: 0,
      },
      endpoints,
      deliveries: deliveries.map((attempt) => ({ ...describeAttempt(attempt), url: attempt.url })),
    };
  });
}
