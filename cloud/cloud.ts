import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { SigningKey } from '../shared/crypto/ed25519.js';
import { Lifecycle, type Part } from '../shared/lifecycle/lifecycle.js';
import { ACK_TIMEOUT_MS } from '../shared/limits.js';
import { createHttpServer, type LogStream, registerRoutes } from './app.js';
import type { AssembledContext } from './context.js';
import { type Clock, systemClock } from './foundation/clock.js';
import type { CloudConfig } from './foundation/config.js';
import {
  type DataFolderLock,
  localAddress,
  lockDataFolder,
  makePrivate,
  recordAddress,
  tighten,
} from './foundation/data-folder.js';
import { type DatabaseHandle, openDatabase } from './foundation/db/database.js';
import type { HttpTimeouts } from './foundation/http/timeouts.js';
import { CloudMetrics } from './foundation/metrics/cloud-metrics.js';
import { registerScrapeGauges } from './foundation/metrics/scrape-gauges.js';
import { backgroundJobs } from './jobs/background-jobs.js';
import type { PeriodicJob } from './jobs/periodic-job.js';
import type { ControllerLink } from './links/controllers/controller-link.js';
import { startControllerLink } from './links/controllers/start.js';
import {
  DEFAULT_DELIVERY,
  type DeliveryOptions,
  EventDelivery,
} from './links/event-delivery/delivery-worker.js';
import { configuredMailer, type Mailer } from './links/mail/mailer.js';
import { fetchKeyFile } from './links/outbound-http/keyfile-fetch.js';
import { defaultResolve, type Resolver } from './links/outbound-http/safe-connection.js';
import { CompanyCache } from './rules/call-auth/company-cache.js';
import { NonceLedger } from './rules/call-auth/nonces.js';
import type { KeyFileFetcher } from './rules/domain-keys/key-file.js';
import { loadSigningKey } from './rules/service-key/signing-key-file.js';

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
  /** Options for the broker, such as a shorter acknowledgement timeout in tests. */
  ackTimeoutMs?: number;
  /** How this program is started, named to a second one that finds the data folder in use. */
  program?: string;
  /** The HTTP server's timeouts (cloud/foundation/http/timeouts.ts); tests use small ones. */
  httpTimeouts?: HttpTimeouts;
  /**
   * The delivery of events to callback addresses (cloud/links/event-delivery/delivery-worker.ts), on by default; tests that
   * deliver by hand (`deliverDue`) turn it off, others give a short timeout or their own resolver.
   */
  eventDelivery?: Partial<DeliveryOptions> | false;
  /** Where the log's JSON lines go; standard output by default (tests read them here). */
  logStream?: LogStream;
}

export interface RunningCloud {
  readonly baseUrl: string;
  /** Where this machine reaches the cloud it runs: its listening address, whatever BASE_URL says. */
  readonly localUrl: string;
  readonly ctx: AssembledContext;
  readonly app: FastifyInstance;
  readonly controllerLink: ControllerLink;
  readonly operatorToken: string;
  /** Where the generated operator token was written, when it was generated. */
  readonly operatorTokenFile: string | undefined;
  stop(): Promise<void>;
}

/**
 * Composes the cloud from one list of components (components.ts): the data folder, the database, the broker,
 * the HTTP server and the background jobs, started in that order and stopped in reverse, by `stop()` or when
 * a later one fails to start.
 */
export async function startCloud(options: CloudOptions): Promise<RunningCloud> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const app = createHttpServer(config.logLevel, {
    timeouts: options.httpTimeouts,
    trustProxy: config.trustProxy,
    logStream: options.logStream,
  });
  const metrics = new CloudMetrics();
  let listeningPort = config.port;
  let addressRecord: { remove(): void } | undefined;
  let database: DatabaseHandle | undefined = options.database;
  let broker: ControllerLink | undefined;
  let jobs: PeriodicJob[] = [];
  let delivery: EventDelivery | undefined;
  const folder = dataFolderComponent(options);
  const baseUrl = () => config.baseUrl ?? `http://localhost:${listeningPort}`;
  const mailer = options.mailer ?? configuredMailer(config, app.log, baseUrl);
  const context = (db: DatabaseHandle): AssembledContext => ({
    config,
    db: db.db,
    clock,
    log: app.log,
    signingKey: folder.signingKey(),
    fetchKeyFile:
      options.fetchKeyFile ??
      ((domain) =>
        fetchKeyFile(domain, config.devKeyfileUrl ? { devUrlTemplate: config.devKeyfileUrl } : {})),
    resolveHost: options.resolveHost ?? defaultResolve,
    companyCache: new CompanyCache(clock),
    nonces: new NonceLedger(db.db, clock),
    mailer,
    metrics,
    baseUrl,
  });
  let ctx: AssembledContext | undefined;

  const lifecycle = new Lifecycle([
    folder,
    {
      name: 'database',
      async start() {
        database ??= await openDatabase(config.database);
        // Once, with everything of this start in it: the embedded database writes its files open to everyone,
        // and an earlier version may have left others so.
        tighten(config.dataDir);
        ctx = context(database);
      },
      async stop() {
        if (!options.database) await database?.close();
      },
    },
    {
      name: 'broker',
      async start() {
        broker = await startControllerLink(
          ctx!,
          options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs },
        );
      },
      stop: () => broker!.stop(),
    },
    {
      // Read at each scrape from the database and the broker (docs/design.md section 8.1); nothing to stop.
      name: 'metrics',
      async start() {
        registerScrapeGauges(metrics, {
          db: database!.db,
          database: database!,
          controllers: () => broker!.connectedControllers(),
          log: app.log,
        });
      },
      async stop() {},
    },
    {
      name: 'HTTP server',
      async start() {
        await registerRoutes(app, {
          ctx: ctx!,
          controllerLink: broker!,
          operatorToken: folder.operator().token,
        });
        await app.listen({ port: config.port, host: config.host });
        const address = app.server.address();
        if (address && typeof address === 'object') listeningPort = address.port;
        // For gatelink-admin on this machine (docs/design.md section 8).
        addressRecord = recordAddress(config.dataDir, localAddress(config.host, listeningPort));
      },
      async stop() {
        addressRecord?.remove();
        await app.close();
      },
    },
    {
      name: 'event delivery',
      async start() {
        if (options.eventDelivery === false) return;
        delivery = new EventDelivery({
          ctx: ctx!,
          database: database!,
          delivery: {
            ...DEFAULT_DELIVERY,
            // Callbacks to private addresses and over plain http: GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS, tests
            // only, which the configuration refuses in production (docs/design.md sections 6 and 11.4).
            allowPrivateAddresses: config.allowPrivateCallbacks,
            // The same resolution the address was checked with when saved (docs/design.md section 11.4).
            resolve: ctx!.resolveHost,
            ...options.eventDelivery,
          },
        });
        await delivery.start();
      },
      stop: async () => delivery?.stop(),
    },
    {
      name: 'background jobs',
      async start() {
        if (options.jobs === false) return;
        jobs = backgroundJobs(ctx!, options.ackTimeoutMs ?? ACK_TIMEOUT_MS);
        for (const job of jobs) job.start();
      },
      async stop() {
        for (const job of jobs) await job.stop();
      },
    },
  ]);
  await lifecycle.start();
  return {
    baseUrl: ctx!.baseUrl(),
    localUrl: localAddress(config.host, listeningPort),
    ctx: ctx!,
    app,
    controllerLink: broker!,
    operatorToken: folder.operator().token,
    operatorTokenFile: folder.operator().file,
    stop: () => lifecycle.stop(),
  };
}

/**
 * The data folder: made private, held by this process alone while it runs the embedded database in it
 * (data-folder.ts), and the keys it keeps, read (or made on first start) once it is.
 */
interface DataFolder extends Part {
  signingKey(): SigningKey;
  operator(): { token: string; file: string | undefined };
}

function dataFolderComponent(options: CloudOptions): DataFolder {
  const { config } = options;
  let lock: DataFolderLock | null = null;
  let signingKey: SigningKey | undefined;
  let operator: { token: string; file: string | undefined } | undefined;
  return {
    name: 'data folder',
    async start() {
      makePrivate(config.dataDir);
      if (ownsEmbeddedDatabase(options)) lock = lockDataFolder(config.dataDir, options.program);
      signingKey = loadSigningKey(config.signingKeyFile);
      operator = loadOperatorToken(config);
    },
    async stop() {
      lock?.release();
    },
    signingKey: () => signingKey!,
    operator: () => operator!,
  };
}

/** The cloud opens the embedded database in its data folder itself, rather than being handed one. */
function ownsEmbeddedDatabase(options: CloudOptions): boolean {
  return !options.database && 'dataDir' in options.config.database;
}

/**
 * OPERATOR_TOKEN, or one generated at first start into the data folder (docs/design.md section 8). The
 * generated one starts with `glop_`: a command line would read a token beginning with `-` as an option, and
 * the prefix lets secret scanners recognise it (cloud/README.md, "Configuration").
 */
function loadOperatorToken(config: CloudConfig): { token: string; file: string | undefined } {
  if (config.operatorToken) return { token: config.operatorToken, file: undefined };
  const file = join(config.dataDir, 'operator-token');
  if (!existsSync(file)) {
    writeFileSync(file, `glop_${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return { token: readFileSync(file, 'utf8').trim(), file };
}
