import type { FastifyInstance } from 'fastify';
import { Lifecycle } from '../shared/lifecycle/lifecycle.js';
import { ACK_TIMEOUT_MS } from '../shared/limits.js';
import { createHttpServer, type LogStream } from './app.js';
import {
  BackgroundJobs,
  ContextComponent,
  ControllerLinkComponent,
  DatabaseComponent,
  DataFolder,
  DigestDeliveryComponent,
  EmbeddedVacuumJob,
  EventDeliveryComponent,
  EventStreamsComponent,
  HttpServer,
  MailDeliveryComponent,
  PushDeliveryComponent,
  QuestionWaitsComponent,
  RoutesComponent,
  ScrapeGauges,
  ServiceKeyRecord,
  UpdateDeliveryJob,
} from './components.js';
import type { AssembledContext } from './context.js';
import { type Clock, systemClock } from './foundation/clock.js';
import type { CloudConfig } from './foundation/config.js';
import type { DatabaseHandle } from './foundation/db/database.js';
import type { HttpTimeouts } from './foundation/http/timeouts.js';
import { CloudMetrics } from './foundation/metrics/cloud-metrics.js';
import { refuseUnsafeProduction } from './foundation/production-refusals.js';
import { UPDATE_DELIVERY_INTERVAL_MS } from './jobs/update-delivery-job.js';
import type { ControllerLink } from './links/controllers/controller-link.js';
import type { SandboxGateTimes } from './links/controllers/sandbox-controller.js';
import { DEFAULT_DELIVERY, type DeliveryOptions } from './links/event-delivery/delivery-worker.js';
import type { EventStreams } from './links/event-streams/event-streams.js';
import { DEFAULT_DIGEST_DELIVERY, type DigestDeliveryOptions } from './links/mail/digest-delivery.js';
import { configuredMailer, type Mailer } from './links/mail/mailer.js';
import { DEFAULT_MAIL_DELIVERY, type MailDeliveryOptions } from './links/mail/opening-mail-delivery.js';
import { fetchKeyFile } from './links/outbound-http/keyfile-fetch.js';
import { defaultResolve, type Resolver } from './links/outbound-http/safe-connection.js';
import { DEFAULT_PUSH_DELIVERY, type PushDeliveryOptions } from './links/web-push/push-delivery.js';
import type { KeyFileFetcher } from './rules/domain-keys/key-file.js';

export interface CloudOptions {
  config: CloudConfig;
  clock?: Clock;
  /** A database opened by the caller (tests share one per file); closed by the caller too. */
  database?: DatabaseHandle;
  fetchKeyFile?: KeyFileFetcher;
  /** How host names resolve; default DNS (`dns.lookup`). */
  resolveHost?: Resolver;
  /** Where sign-in codes go; by default the one SMTP_URL names, or the log. */
  mailer?: Mailer;
  /** Background jobs (expiry sweep, key re-confirmation, purges). Tests that drive them by hand turn them off. */
  jobs?: boolean;
  /** Options for the controller link, such as a shorter acknowledgement timeout in tests. */
  ackTimeoutMs?: number;
  /** When the sandbox gates move (cloud/links/controllers/sandbox-controller.ts); tests make them quick. */
  sandboxGate?: SandboxGateTimes;
  /** How this program is started, named to a second one that finds the data folder in use. */
  program?: string;
  /** The HTTP server's timeouts (cloud/foundation/http/timeouts.ts); tests use small ones. */
  httpTimeouts?: HttpTimeouts;
  /**
   * The delivery of events to callback addresses (cloud/links/event-delivery/delivery-worker.ts), on by default; tests that
   * deliver by hand (`deliverDue`) turn it off, others give a short timeout or their own resolver.
   */
  eventDelivery?: Partial<DeliveryOptions> | false;
  /**
   * Web Push of openings to customers' browsers (cloud/links/web-push/push-delivery.ts), on by default; tests that
   * send by hand (`deliverDuePushes`) turn it off.
   */
  pushDelivery?: Partial<PushDeliveryOptions> | false;
  /**
   * E-mails of openings to those who asked for them (cloud/links/mail/opening-mail-delivery.ts), on by default;
   * tests that send by hand (`deliverDueMails`) turn it off.
   */
  mailDelivery?: Partial<MailDeliveryOptions> | false;
  /**
   * The daily digests (cloud/links/mail/digest-delivery.ts), on by default; tests that send by hand
   * (`deliverDueDigests`) turn it off.
   */
  digestDelivery?: Partial<DigestDeliveryOptions> | false;
  /** Where the log's JSON lines go; standard output by default (tests read them here). */
  logStream?: LogStream;
  /**
   * Rollouts' update commands (docs/design.md section 12.4.2): `intervalMs` between looks for controllers to
   * send to (default UPDATE_DELIVERY_INTERVAL_MS), `resendAfterMs` before a command without a report goes
   * again (default 5 min); false: only controllers coming online are sent to, and tests call
   * `controllerLink.updates.deliverDue()` themselves.
   */
  updateDelivery?: { intervalMs?: number; resendAfterMs?: number } | false;
}

export interface RunningCloud {
  readonly baseUrl: string;
  /** Where this machine reaches the cloud it runs: its listening address, whatever BASE_URL says. */
  readonly localUrl: string;
  readonly ctx: AssembledContext;
  readonly app: FastifyInstance;
  readonly controllerLink: ControllerLink;
  /** The `listen` streams of this instance. */
  readonly streams: EventStreams;
  readonly operatorToken: string;
  /** Where the generated operator token was written, when it was generated. */
  readonly operatorTokenFile: string | undefined;
  stop(): Promise<void>;
}

/**
 * Composes the cloud from one list of components (components.ts), each owning what it makes: the data folder,
 * the database, the service key held to the database's, the context, the controller link, the metrics, the routes (what the service is, app.ts), the
 * HTTP server (how it listens), event delivery and the background jobs. Started in that order and stopped in
 * reverse, by `stop()` or when a later one fails to start (shared/lifecycle/lifecycle.ts). In production, what
 * foundation/production-refusals.ts refuses stops it before any of them starts (ConfigError, one line each).
 */
export async function startCloud(options: CloudOptions): Promise<RunningCloud> {
  const { config } = options;
  refuseUnsafeProduction(config);
  const clock = options.clock ?? systemClock;
  const app = createHttpServer(config.logLevel, {
    timeouts: options.httpTimeouts,
    trustProxy: config.trustProxy,
    logStream: options.logStream,
  });
  const server = new HttpServer(app, config);
  const baseUrl = () => server.baseUrl();
  const folder = new DataFolder({
    config,
    lock: !options.database && 'dataDir' in config.database,
    program: options.program,
  });
  const database = new DatabaseComponent({ config, database: options.database });
  const context = new ContextComponent(
    {
      config,
      clock,
      log: app.log,
      metrics: new CloudMetrics(),
      baseUrl,
      fetchKeyFile:
        options.fetchKeyFile ??
        ((domain) =>
          fetchKeyFile(domain, config.devKeyfileUrl ? { devUrlTemplate: config.devKeyfileUrl } : {})),
      resolveHost: options.resolveHost ?? defaultResolve,
      mailer: options.mailer ?? configuredMailer(config, app.log, baseUrl),
    },
    { folder, database },
  );
  const updates = options.updateDelivery;
  const link = new ControllerLinkComponent(context, {
    ...(options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs }),
    ...(options.sandboxGate ? { sandboxGate: options.sandboxGate } : {}),
    ...(updates && updates.resendAfterMs !== undefined ? { resendAfterMs: updates.resendAfterMs } : {}),
  });
  const questions = new QuestionWaitsComponent({ context, database });
  const streams = new EventStreamsComponent({ context, database });
  const lifecycle = new Lifecycle([
    folder,
    database,
    new ServiceKeyRecord({ config, folder, database }),
    context,
    link,
    new ScrapeGauges({ context, database, link }),
    questions,
    streams,
    new RoutesComponent(app, { context, link, folder, questions, streams }),
    server,
    new EventDeliveryComponent({ context, database }, deliveryOptions(options)),
    new PushDeliveryComponent(context, pushDeliveryOptions(options), database),
    new MailDeliveryComponent(
      context,
      options.mailDelivery === false ? false : { ...DEFAULT_MAIL_DELIVERY, ...options.mailDelivery },
    ),
    new DigestDeliveryComponent(
      context,
      options.digestDelivery === false ? false : { ...DEFAULT_DIGEST_DELIVERY, ...options.digestDelivery },
    ),
    new UpdateDeliveryJob(
      { context, link },
      updates === false ? false : (updates?.intervalMs ?? UPDATE_DELIVERY_INTERVAL_MS),
    ),
    new EmbeddedVacuumJob({ context, database }),
    new BackgroundJobs(context, options.jobs === false ? false : (options.ackTimeoutMs ?? ACK_TIMEOUT_MS)),
  ]);
  await lifecycle.start();
  return {
    baseUrl: baseUrl(),
    localUrl: server.localUrl,
    ctx: context.ctx,
    app,
    controllerLink: link.link,
    streams: streams.streams,
    operatorToken: folder.operator.token,
    operatorTokenFile: folder.operator.file,
    stop: () => lifecycle.stop(),
  };
}

/** How events reach callback addresses, or false when the caller delivers by hand (`deliverDue`). */
function deliveryOptions(options: CloudOptions): DeliveryOptions | false {
  if (options.eventDelivery === false) return false;
  return {
    ...DEFAULT_DELIVERY,
    // Callbacks to private addresses and over plain http: GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS, tests only,
    // which the configuration refuses in production (docs/design.md sections 6 and 11.4).
    allowPrivateAddresses: options.config.allowPrivateCallbacks,
    // The same resolution the address was checked with when saved (docs/design.md section 11.4).
    resolve: options.resolveHost ?? defaultResolve,
    ...options.eventDelivery,
  };
}

/** How notifications reach push services, or false when the caller sends by hand (`deliverDuePushes`). */
function pushDeliveryOptions(options: CloudOptions): PushDeliveryOptions | false {
  if (options.pushDelivery === false) return false;
  return {
    ...DEFAULT_PUSH_DELIVERY,
    // The callbacks' test switch, refused in production, lets loopback push services through (docs/design.md
    // section 10.6), with the resolution the endpoint was checked with when subscribed.
    allowPrivateAddresses: options.config.allowPrivateCallbacks,
    resolve: options.resolveHost ?? defaultResolve,
    ...options.pushDelivery,
  };
}
