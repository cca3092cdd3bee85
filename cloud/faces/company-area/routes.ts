import type { FastifyInstance } from 'fastify';
import { accessRoutes } from './access-routes.js';
import { companyActivityRoutes } from './activity-routes.js';
import { callbackRoutes } from './callback-routes.js';
import { companiesRoutes } from './companies-routes.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { eventsRoutes } from './events-routes.js';
import { companyJournalRoutes } from './journal-routes.js';
import { logoRoutes } from './logo-routes.js';
import { membersRoutes } from './members-routes.js';
import { overviewRoutes } from './overview-routes.js';
import { requestsRoutes } from './requests-routes.js';
import { sandboxRoutes } from './sandbox-routes.js';

/**
 * The company account area (docs/design.md section 11): where a company registers, and its members manage its
 * API access, logo, callback address and members, and read its requests, openings and who did what. Each group of routes
 * lives in a file named after what the member does there; every company page goes through company-access.ts.
 */
export async function companyArea(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  await app.register(companiesRoutes, deps);
  await app.register(overviewRoutes, deps);
  await app.register(membersRoutes, deps);
  await app.register(requestsRoutes, deps);
  await app.register(companyJournalRoutes, deps);
  await app.register(callbackRoutes, deps);
  await app.register(accessRoutes, deps);
  await app.register(logoRoutes, deps);
  await app.register(eventsRoutes, deps);
  await app.register(sandboxRoutes, deps);
  await app.register(companyActivityRoutes, deps);
}
