import type { FastifyInstance } from 'fastify';
import { accountRoutes } from './account-routes.js';
import { barrierRoutes } from './barrier-routes.js';
import { barrierZoneRoutes } from './barrier-zone.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { emailCodeRoutes } from './email-code-routes.js';
import { homeRoutes } from './home-routes.js';
import { invitationRoutes } from './invitation-routes.js';
import { journalRoutes } from './journal-routes.js';
import { keyShapeRoutes } from './key-shape-routes.js';
import { notificationChoiceRoutes } from './notification-choice.js';
import { notificationRoutes } from './notification-routes.js';
import { offlineRoutes } from './offline-routes.js';
import { passkeyRoutes } from './passkey-routes.js';
import { phoneSetupRoutes } from './phone-setup-routes.js';
import { questionRoutes } from './question-routes.js';
import { receiptsRoutes } from './receipts-routes.js';
import { requestRoutes } from './request-routes.js';
import { sessionRoutes } from './session-routes.js';
import { signInRoutes } from './signin-routes.js';
import { signUpRoutes } from './signup-routes.js';

/**
 * The customer application (docs/design.md section 10): every page and form a customer uses, on the web
 * foundation (cookies, CSRF, security headers, sessions). Each group of routes lives in a file named after
 * what the customer does there. The foundation they stand on is registered around them (cloud/web-pages.ts).
 */
export async function customerApp(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  await app.register(offlineRoutes, deps);
  await app.register(homeRoutes, deps);
  await app.register(sessionRoutes, deps);
  await app.register(requestRoutes, deps);
  await app.register(phoneSetupRoutes, deps);
  await app.register(barrierRoutes, deps);
  await app.register(invitationRoutes, deps);
  await app.register(keyShapeRoutes, deps);
  await app.register(questionRoutes, deps);
  await app.register(barrierZoneRoutes, deps);
  await app.register(signInRoutes, deps);
  await app.register(emailCodeRoutes, deps);
  await app.register(signUpRoutes, deps);
  await app.register(accountRoutes, deps);
  await app.register(passkeyRoutes, deps);
  await app.register(notificationRoutes, deps);
  await app.register(notificationChoiceRoutes, deps);
  await app.register(journalRoutes, deps);
  await app.register(receiptsRoutes, deps);
}
