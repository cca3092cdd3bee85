import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { HEADER_LIMIT_BYTES } from '../shared/limits.js';
import type { AssembledContext } from './context.js';
import { apiContractRoutes } from './faces/api-contract/routes.js';
import { companyApiRoutes } from './faces/company-api/route.js';
import { emailUnsubscribeRoutes } from './faces/customer-pages/email-unsubscribe.js';
import { notFoundPage } from './faces/customer-pages/not-found.js';
import { deviceInstallRoutes } from './faces/device-install/routes.js';
import { registerMetrics } from './faces/operator-api/metrics-routes.js';
import { opsRoutes } from './faces/operator-api/routes.js';
import { databaseOutage } from './foundation/db/database-outage.js';
import {
  answerClientError,
  answerConnect,
  serveDespiteExpectations,
} from './foundation/http/client-errors.js';
import { watchConnections } from './foundation/http/connections.js';
import { answerFrameworkError, registerErrorHandling } from './foundation/http/errors.js';
import { HTTP_TIMEOUTS, type HttpTimeouts } from './foundation/http/timeouts.js';
import { webAssets } from './foundation/web/assets-plugin.js';
import type { ControllerLink } from './links/controllers/controller-link.js';
import type { EventStreams } from './links/event-streams/event-streams.js';
import { pairingCodeRoute } from './rules/devices/pairing-code-route.js';
import { provisioningRoute } from './rules/devices/provisioning-route.js';
import { logoRoute } from './rules/logos/logo-route.js';
import type { QuestionWaits } from './rules/opening-questions/question-waits.js';
import { bundleRoute } from './rules/releases/bundle-route.js';
import { serviceKeyRoute } from './rules/service-key/service-key-route.js';
import { webPages } from './web-pages.js';

/** Where the log's JSON lines go instead of standard output (pino's destination). */
export interface LogStream {
  write(line: string): void;
}

/** A Fastify instance with the cloud's logger and HTTP limits; routes are added by `registerRoutes`. */
export function createHttpServer(
  logLevel: string,
  options: {
    timeouts?: HttpTimeouts | undefined;
    trustProxy?: string | undefined;
    logStream?: LogStream | undefined;
  } = {},
): FastifyInstance {
  const timeouts = options.timeouts ?? HTTP_TIMEOUTS;
  const app = Fastify({
    logger: { level: logLevel, ...(options.logStream ? { stream: options.logStream } : {}) },
    genReqId: () => randomUUID(),
    // Never trust a request id sent by the client: ours is the one in the log.
    requestIdHeader: false,
    // One line per request only when debugging; failures are logged by our error handler at any level.
    logController: new LogController({ disableRequestLogging: logLevel !== 'debug' && logLevel !== 'trace' }),
    bodyLimit: 64 * 1024,
    // Only the proxies named in TRUST_PROXY may say who the client is; anyone else could claim any address
    // and escape the per-address limits.
    trustProxy: options.trustProxy ?? false,
    http: {
      headersTimeout: timeouts.headersMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      maxHeaderSize: HEADER_LIMIT_BYTES,
      // Node would answer a missing Host itself, outside the error contract; registerErrorHandling does.
      requireHostHeader: false,
    },
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // A call that reaches a closing server is served (with Connection: close) while the database and broker
    // are still up, instead of getting Fastify's own 503 outside the error contract.
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
  app.server.on('connect', answerConnect(app.log));
  const connections = watchConnections(app.server, timeouts.headersMs);
  app.addHook('preClose', async () => connections.dropSilentSoon());
  serveDespiteExpectations(app.server);
  return app;
}

export async function registerRoutes(
  app: FastifyInstance,
  deps: {
    ctx: AssembledContext;
    controllerLink: ControllerLink;
    operatorToken: string;
    questions: QuestionWaits;
    streams: EventStreams;
  },
): Promise<void> {
  registerErrorHandling(app, { notFoundPage: notFoundPage(deps.ctx), outage: databaseOutage(deps.ctx) });
  app.get('/healthz', async () => ({ ok: 1 }));
  registerMetrics(app, deps);
  await app.register(companyApiRoutes, {
    ctx: deps.ctx,
    dispatcher: deps.controllerLink,
    questions: deps.questions,
    streams: deps.streams,
  });
  await app.register(provisioningRoute, { ctx: deps.ctx, accounts: deps.controllerLink });
  await app.register(pairingCodeRoute, { ctx: deps.ctx });
  await app.register(bundleRoute, { ctx: deps.ctx });
  await app.register(deviceInstallRoutes, { ctx: deps.ctx });
  await app.register(opsRoutes, { ctx: deps.ctx, token: deps.operatorToken, accounts: deps.controllerLink });
  await app.register(serviceKeyRoute, { ctx: deps.ctx });
  await app.register(apiContractRoutes, { ctx: deps.ctx });
  await app.register(webAssets, { ctx: deps.ctx });
  await app.register(logoRoute, { ctx: deps.ctx });
  // Beside the pages, not under them: a mail client's one-click POST has no session and no CSRF token.
  await app.register(emailUnsubscribeRoutes, { ctx: deps.ctx });
  await app.register(webPages, {
    ctx: deps.ctx,
    operatorToken: deps.operatorToken,
    accounts: deps.controllerLink,
  });
}
