import type { FastifyInstance } from 'fastify';
import type { AssembledContext } from './context.js';
import { companyArea } from './faces/company-area/routes.js';
import { operatorConsole } from './faces/console/routes.js';
import { customerApp } from './faces/customer-pages/routes.js';
import type { WebDeps } from './foundation/web/web-deps.js';
import { webFoundation } from './foundation/web/web-plugin.js';
import type { BrokerAccounts } from './rules/devices/device-lifecycle.js';

/**
 * Every web page the cloud serves, on one foundation (docs/design.md section 10.1): the customer application
 * (section 10), the company account area and the operator console (section 11). They share cookies, CSRF,
 * security headers and the signed-in account, so one sign-in serves a person wherever they act.
 */
export async function webPages(
  app: FastifyInstance,
  options: { ctx: AssembledContext; operatorToken: string; accounts: BrokerAccounts },
): Promise<void> {
  const cookies = await webFoundation(app, options.ctx);
  const deps: WebDeps<AssembledContext> = { ctx: options.ctx, cookies };
  await app.register(customerApp, { ...deps, accounts: options.accounts });
  await app.register(companyArea, deps);
  await app.register(operatorConsole, { ...deps, operatorToken: options.operatorToken });
}
