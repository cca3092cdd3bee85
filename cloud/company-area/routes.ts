import type { FastifyInstance } from 'fastify';
import type { WebDeps } from '../web/web-deps.js';
import { companiesRoutes } from './companies-routes.js';
import { eventsRoutes } from './events-routes.js';
import { membersRoutes } from './members-routes.js';
import { overviewRoutes } from './overview-routes.js';

/**
 * The company account area (docs/design.md section 11): where a company registers, and its members manage its
 * API access, logo, callback address and members, and read its requests and openings. Each group of routes
 * lives in a file named after what the member does there; every company page goes through company-access.ts.
 */
export async function companyArea(app: FastifyInstance, deps: WebDeps): Promise<void> {
  await app.register(companiesRoutes, deps);
  await app.register(overviewRoutes, deps);
  await app.register(membersRoutes, deps);
  await app.register(eventsRoutes, deps);
}
