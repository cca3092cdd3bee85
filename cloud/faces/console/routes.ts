import type { FastifyInstance } from 'fastify';
import { companiesRoutes } from './companies-routes.js';
import { companyRoutes } from './company-routes.js';
import { type ConsoleDeps, requireOperator } from './console-access.js';
import { fleetRoutes } from './fleet-routes.js';
import { operatorsRoutes } from './operators-routes.js';
import { signinRoutes } from './signin-routes.js';

/**
 * The operator console (docs/design.md section 11.5): pending companies, approval, rejection with a reason,
 * suspension and resumption, operator accounts, and the record of who did each. Only the sign-in and sign-out
 * stand outside the operator check; every other route is registered behind it.
 */
export async function operatorConsole(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  await app.register(signinRoutes, deps);
  await app.register(async (operatorsOnly: FastifyInstance) => {
    requireOperator(operatorsOnly, deps);
    await operatorsOnly.register(companiesRoutes, deps);
    await operatorsOnly.register(companyRoutes, deps);
    await operatorsOnly.register(operatorsRoutes, deps);
    await operatorsOnly.register(fleetRoutes, deps);
  });
}
