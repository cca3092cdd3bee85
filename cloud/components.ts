import type { FastifyInstance } from 'fastify';
import type { SigningKey } from '../shared/crypto/ed25519.js';
import type { Part } from '../shared/lifecycle/lifecycle.js';
import { registerRoutes } from './app.js';
import type { AssembledContext } from './context.js';
import type { Clock } from './foundation/clock.js';
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
import { databaseOutage } from './foundation/db/database-outage.js';
import { EmbeddedVacuum, VACUUM_NAPTIME_MS } from './foundation/db/embedded-vacuum.js';
import type { CloudMetrics } from './foundation/metrics/cloud-metrics.js';
import { registerScrapeGauges } from './foundation/metrics/scrape-gauges.js';
import { Foreground } from './foundation/priority/foreground.js';
import { backgroundJobs } from './jobs/background-jobs.js';
import { PeriodicJob } from './jobs/periodic-job.js';
import { updateDeliveryJob } from './jobs/update-delivery-job.js';
import type { ControllerLink } from './links/controllers/controller-link.js';
import { type ControllerLinkOptions, startControllerLink } from './links/controllers/start.js';
import { type DeliveryOptions, EventDelivery } from './links/event-delivery/delivery-worker.js';
import { EventStreams } from './links/event-streams/event-streams.js';
import { deliverDueCompanyMails } from './links/mail/company-mail-delivery.js';
import { type DigestDeliveryOptions, deliverDueDigests } from './links/mail/digest-delivery.js';
import type { Mailer } from './links/mail/mailer.js';
import { deliverDueMails, type MailDeliveryOptions } from './links/mail/opening-mail-delivery.js';
import type { Resolver } from './links/outbound-http/safe-connection.js';
import { deliverDuePushes, type PushDeliveryOptions } from './links/web-push/push-delivery.js';
import { CompanyCache } from './rules/call-auth/company-cache.js';
import { NonceLedger } from './rules/call-auth/nonces.js';
import type { KeyFileFetcher } from './rules/domain-keys/key-file.js';
import { QuestionWaits } from './rules/opening-questions/question-waits.js';
import { loadOperatorToken } from './rules/operators/operator-token-file.js';
import { PUSH_WAKE_CHANNEL } from './rules/push-notifications/push-wake.js';
import { checkRecordedServiceKey } from './rules/service-key/recorded-service-key.js';
import { loadServiceKey } from './rules/service-key/service-key-file.js';
import { loadVapidKey, type VapidKey } from './rules/vapid-key/vapid-key-file.js';

/**
 * The cloud's components (docs/design.md section 8), each owning what it makes when it starts. cloud.ts lists
 * them in start order; a component hands what it made to those after it through a getter, which refuses to
 * answer before it started, so a list in the wrong order fails at once, naming what was read too early.
 */
function made<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} was read before its component started`);
  return value;
}

/**
 * The data folder: made private, held by this process alone while it runs the embedded database in it
 * (foundation/data-folder.ts), and the keys it keeps, read (or made on first start) once it is.
 */
export class DataFolder implements Part {
  readonly name = 'data folder';
  readonly #config: CloudConfig;
  readonly #lockIt: boolean;
  readonly #program: string | undefined;
  #lock: DataFolderLock | null = null;
  #serviceKey: SigningKey | undefined;
  #vapid: VapidKey | undefined;
  #operator: { token: string; file: string | undefined } | undefined;

  /** `lock`: the cloud opens the embedded database in the folder itself, rather than being handed one. */
  constructor(options: { config: CloudConfig; lock: boolean; program: string | undefined }) {
    this.#config = options.config;
    this.#lockIt = options.lock;
    this.#program = options.program;
  }

  async start(): Promise<void> {
    makePrivate(this.#config.dataDir);
    if (this.#lockIt) this.#lock = lockDataFolder(this.#config.dataDir, this.#program);
    // Production never makes it at start (foundation/production-refusals.ts): `gatelink-admin keys init` does.
    this.#serviceKey = loadServiceKey(this.#config.serviceKeyFile, { make: !this.#config.production });
    // Likewise the VAPID key of Web Push (docs/design.md section 10.6): the demo and tests make theirs here.
    this.#vapid = loadVapidKey(this.#config.vapidKeyFile, { make: !this.#config.production });
    this.#operator = loadOperatorToken(this.#config.dataDir, this.#config.operatorToken);
  }

  async stop(): Promise<void> {
    this.#lock?.release();
  }

  get serviceKey(): SigningKey {
    return made(this.#serviceKey, 'the service key');
  }

  get vapid(): VapidKey {
    return made(this.#vapid, 'the VAPID key');
  }

  get operator(): { token: string; file: string | undefined } {
    return made(this.#operator, 'the operator token');
  }
}

/** The database: the one the caller handed in (and closes), or the one configured, opened and closed here. */
export class DatabaseComponent implements Part {
  readonly name = 'database';
  readonly #config: CloudConfig;
  readonly #given: DatabaseHandle | undefined;
  #handle: DatabaseHandle | undefined;

  constructor(options: { config: CloudConfig; database: DatabaseHandle | undefined }) {
    this.#config = options.config;
    this.#given = options.database;
  }

  async start(): Promise<void> {
    this.#handle = this.#given ?? (await openDatabase(this.#config.database));
    // Once, with everything of this start in it: the embedded database writes its files open to everyone,
    // and an earlier version may have left others so.
    tighten(this.#config.dataDir);
  }

  async stop(): Promise<void> {
    if (!this.#given) await this.#handle?.close();
  }

  get handle(): DatabaseHandle {
    return made(this.#handle, 'the database');
  }
}

/**
 * The service key held to the one the database keeps (rules/service-key/recorded-service-key.ts), in every
 * mode: a second instance with a key of its own stops here, before it signs anything.
 */
export class ServiceKeyRecord implements Part {
  readonly name = 'service key';
  readonly #parts: { config: CloudConfig; folder: DataFolder; database: DatabaseComponent };

  constructor(parts: { config: CloudConfig; folder: DataFolder; database: DatabaseComponent }) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    const { config, folder, database } = this.#parts;
    await checkRecordedServiceKey(database.handle.db, folder.serviceKey, config.serviceKeyFile);
  }

  async stop(): Promise<void> {}
}

/** The services the context holds beside the ground; each a default the options may replace. */
export interface ContextServices {
  config: CloudConfig;
  clock: Clock;
  metrics: CloudMetrics;
  log: AssembledContext['log'];
  baseUrl(): string;
  fetchKeyFile: KeyFileFetcher;
  resolveHost: Resolver;
  mailer: Mailer;
}

/**
 * The one context every part is handed (cloud/context.ts), assembled once the database is open and the
 * folder's key read. Nothing to stop: the nonce ledger writes each batch before the call it serves answers.
 */
export class ContextComponent implements Part {
  readonly name = 'context';
  readonly #services: ContextServices;
  readonly #folder: DataFolder;
  readonly #database: DatabaseComponent;
  #ctx: AssembledContext | undefined;

  constructor(services: ContextServices, parts: { folder: DataFolder; database: DatabaseComponent }) {
    this.#services = services;
    this.#folder = parts.folder;
    this.#database = parts.database;
  }

  async start(): Promise<void> {
    const { clock } = this.#services;
    const db = this.#database.handle.db;
    this.#ctx = {
      ...this.#services,
      db,
      serviceKey: this.#folder.serviceKey,
      vapid: this.#folder.vapid,
      foreground: new Foreground(),
      companyCache: new CompanyCache(clock),
      nonces: new NonceLedger(db, clock),
    };
  }

  async stop(): Promise<void> {}

  get ctx(): AssembledContext {
    return made(this.#ctx, 'the context');
  }
}

/** The controller link (docs/design.md section 7): embedded aedes or an external broker behind one face. */
export class ControllerLinkComponent implements Part {
  readonly name = 'controller link';
  readonly #context: ContextComponent;
  readonly #options: ControllerLinkOptions;
  #link: ControllerLink | undefined;

  constructor(context: ContextComponent, options: ControllerLinkOptions) {
    this.#context = context;
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#link = await startControllerLink(this.#context.ctx, this.#options);
  }

  async stop(): Promise<void> {
    await this.#link?.stop();
  }

  get link(): ControllerLink {
    return made(this.#link, 'the controller link');
  }
}

/** The gauges read at each scrape from the database and the controller link (docs/design.md section 8.1). */
export class ScrapeGauges implements Part {
  readonly name = 'metrics';
  readonly #parts: { context: ContextComponent; database: DatabaseComponent; link: ControllerLinkComponent };

  constructor(parts: {
    context: ContextComponent;
    database: DatabaseComponent;
    link: ControllerLinkComponent;
  }) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    const { context, database, link } = this.#parts;
    const controllerLink = link.link;
    registerScrapeGauges(context.ctx.metrics, {
      db: database.handle.db,
      database: database.handle,
      controllers: () => controllerLink.connectedControllers(),
      log: context.ctx.log,
    });
  }

  // The registry goes with the instance; nothing to undo.
  async stop(): Promise<void> {}
}

/**
 * The `open` calls of this instance waiting for a customer's answer (docs/design.md section 10.8), woken at once
 * by the database's notification when any instance writes an answer, and polling meanwhile.
 */
export class QuestionWaitsComponent implements Part {
  readonly name = 'question waits';
  readonly #parts: { context: ContextComponent; database: DatabaseComponent };
  #waits: QuestionWaits | undefined;

  constructor(parts: { context: ContextComponent; database: DatabaseComponent }) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    const { ctx } = this.#parts.context;
    this.#waits = new QuestionWaits(ctx.db, ctx.clock);
    await this.#waits.start(this.#parts.database.handle);
  }

  async stop(): Promise<void> {
    await this.#waits?.stop();
  }

  get waits(): QuestionWaits {
    return made(this.#waits, 'the question waits');
  }
}

/** The companies' `listen` streams of their events (links/event-streams/), woken by the database's notification. */
export class EventStreamsComponent implements Part {
  readonly name = 'event streams';
  readonly #parts: { context: ContextComponent; database: DatabaseComponent };
  #streams: EventStreams | undefined;

  constructor(parts: { context: ContextComponent; database: DatabaseComponent }) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    this.#streams = new EventStreams({ ctx: this.#parts.context.ctx, database: this.#parts.database.handle });
    await this.#streams.start();
  }

  async stop(): Promise<void> {
    await this.#streams?.stop();
  }

  get streams(): EventStreams {
    return made(this.#streams, 'the event streams');
  }
}

/** What the service answers (app.ts): every route, registered on the app before it listens. */
export class RoutesComponent implements Part {
  readonly name = 'HTTP routes';
  readonly #app: FastifyInstance;
  readonly #parts: {
    context: ContextComponent;
    link: ControllerLinkComponent;
    folder: DataFolder;
    questions: QuestionWaitsComponent;
    streams: EventStreamsComponent;
  };

  constructor(
    app: FastifyInstance,
    parts: {
      context: ContextComponent;
      link: ControllerLinkComponent;
      folder: DataFolder;
      questions: QuestionWaitsComponent;
      streams: EventStreamsComponent;
    },
  ) {
    this.#app = app;
    this.#parts = parts;
  }

  async start(): Promise<void> {
    const { context, link, folder, questions, streams } = this.#parts;
    await registerRoutes(this.#app, {
      ctx: context.ctx,
      controllerLink: link.link,
      operatorToken: folder.operator.token,
      questions: questions.waits,
      streams: streams.streams,
    });
  }

  // Closing the app is the server's, which stops first.
  async stop(): Promise<void> {}
}

/**
 * How the service listens (fastify/demo's server apart from its app): on the configured port, recorded in the
 * data folder for gatelink-admin on this machine (docs/design.md section 8). Stopping closes the app, which
 * lets calls in flight finish.
 */
export class HttpServer implements Part {
  readonly name = 'HTTP server';
  readonly #app: FastifyInstance;
  readonly #config: CloudConfig;
  #port: number;
  #addressRecord: { remove(): void } | undefined;

  constructor(app: FastifyInstance, config: CloudConfig) {
    this.#app = app;
    this.#config = config;
    this.#port = config.port;
  }

  async start(): Promise<void> {
    const { host, port, dataDir } = this.#config;
    await this.#app.listen({ port, host });
    const address = this.#app.server.address();
    if (address && typeof address === 'object') this.#port = address.port;
    this.#addressRecord = recordAddress(dataDir, this.localUrl);
  }

  async stop(): Promise<void> {
    this.#addressRecord?.remove();
    await this.#app.close();
  }

  /** Where the cloud says it is: BASE_URL, or this machine's name and the port it listens on. */
  baseUrl(): string {
    return this.#config.baseUrl ?? `http://localhost:${this.#port}`;
  }

  /** Where this machine reaches the cloud: its listening address, whatever BASE_URL says. */
  get localUrl(): string {
    return localAddress(this.#config.host, this.#port);
  }
}

/** The delivery of events to callback addresses (links/event-delivery/), unless turned off. */
export class EventDeliveryComponent implements Part {
  readonly name = 'event delivery';
  readonly #parts: { context: ContextComponent; database: DatabaseComponent };
  readonly #options: DeliveryOptions | false;
  #delivery: EventDelivery | undefined;

  constructor(
    parts: { context: ContextComponent; database: DatabaseComponent },
    options: DeliveryOptions | false,
  ) {
    this.#parts = parts;
    this.#options = options;
  }

  async start(): Promise<void> {
    if (this.#options === false) return;
    const { context, database } = this.#parts;
    this.#delivery = new EventDelivery({
      ctx: context.ctx,
      database: database.handle,
      delivery: this.#options,
    });
    await this.#delivery.start();
  }

  async stop(): Promise<void> {
    await this.#delivery?.stop();
  }
}

/**
 * A delivery of opening notices (docs/design.md sections 10.6 and 10.7) run as a PeriodicJob every `pollMs`,
 * unless off: each look fans the journal out and sends what is due. `stop()` aborts the attempts in flight, whose
 * rows go back to the outbox, and waits for the look in hand.
 */
abstract class NoticeDeliveryComponent<O extends { pollMs: number }> implements Part {
  abstract readonly name: string;
  readonly #context: ContextComponent;
  readonly #options: O | false;
  #stop = new AbortController();
  #job: PeriodicJob | undefined;

  constructor(context: ContextComponent, options: O | false) {
    this.#context = context;
    this.#options = options;
  }

  protected abstract deliver(ctx: AssembledContext, options: O, stop: AbortSignal): Promise<unknown>;

  /** Whether it runs, that is was not turned off. */
  protected get on(): boolean {
    return this.#options !== false;
  }

  /** Looks now rather than at the next poll (a notification said there is work). */
  protected wake(): void {
    this.#job?.wake();
  }

  async start(): Promise<void> {
    if (this.#options === false) return;
    const options = this.#options;
    const { ctx } = this.#context;
    this.#stop = new AbortController();
    const stop = this.#stop.signal;
    this.#job = new PeriodicJob({
      name: this.name,
      intervalMs: options.pollMs,
      run: () => this.deliver(ctx, options, stop),
      log: ctx.log,
      outage: databaseOutage(ctx),
      wakeGapMs: NOTICE_WAKE_GAP_MS,
    });
    this.#job.start();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#job?.stop();
  }
}

/**
 * Looks woken by commits begin at least this far apart: a busy cloud completes an entry with most of its
 * openings, and one look per 20 ms serves them all, where one per commit would compete with the openings for
 * the database (on PGlite for its one connection). An idle delivery's first wake is not delayed.
 */
const NOTICE_WAKE_GAP_MS = 20;

/**
 * Each batch of pushes waits for a moment with no opening under way on the instance (as position reports do,
 * foundation/priority/foreground.ts), at most this long: pushes share the cores with the openings, and nobody
 * stands waiting for one. Short, so that under openings that never pause the pushes still keep up.
 */
const PUSH_GIVE_WAY_MAX_MS = 100;

/**
 * Web Push of openings to the customers' browsers (links/web-push/, docs/design.md section 10.6), unless off.
 * Woken by every commit that gives an entry its outcome, on a connection of its own that LISTENs (on PGlite, its
 * one connection); the poll stays for retries that came due and for entries told "In progress".
 */
export class PushDeliveryComponent extends NoticeDeliveryComponent<PushDeliveryOptions> {
  readonly name = 'push delivery';
  readonly #database: DatabaseComponent;
  #unlisten: (() => Promise<void>) | null = null;

  constructor(context: ContextComponent, options: PushDeliveryOptions | false, database: DatabaseComponent) {
    super(context, options);
    this.#database = database;
  }

  protected deliver(ctx: AssembledContext, options: PushDeliveryOptions, stop: AbortSignal) {
    const giveWay = () => ctx.foreground.quiet(PUSH_GIVE_WAY_MAX_MS);
    return deliverDuePushes(ctx, { giveWay, ...options }, stop);
  }

  override async start(): Promise<void> {
    await super.start();
    const { handle } = this.#database;
    if (this.on && handle.listen) this.#unlisten = await handle.listen(PUSH_WAKE_CHANNEL, () => this.wake());
  }

  override async stop(): Promise<void> {
    await this.#unlisten?.().catch(() => {});
    this.#unlisten = null;
    await super.stop();
  }
}

/**
 * E-mails of openings to those who asked for them, and to companies' members of their approval, refusal or
 * failing callback address (links/mail/, docs/design.md sections 10.7 and 11.7), unless off.
 */
export class MailDeliveryComponent extends NoticeDeliveryComponent<MailDeliveryOptions> {
  readonly name = 'mail delivery';

  protected async deliver(ctx: AssembledContext, options: MailDeliveryOptions, stop: AbortSignal) {
    await deliverDueMails(ctx, options, stop);
    await deliverDueCompanyMails(ctx, options, stop);
  }
}

/** The daily digests of the day before (links/mail/, docs/design.md section 10.7), unless off. */
export class DigestDeliveryComponent extends NoticeDeliveryComponent<DigestDeliveryOptions> {
  readonly name = 'digest delivery';

  protected deliver(ctx: AssembledContext, options: DigestDeliveryOptions, stop: AbortSignal) {
    return deliverDueDigests(ctx, options, stop);
  }
}

/** The periodic jobs (jobs/background-jobs.ts): expiry sweep, key re-confirmation, purges; unless turned off. */
/** The periodic delivery of rollouts' update commands (docs/design.md section 12.4.2); off with `false`. */
export class UpdateDeliveryJob implements Part {
  readonly name = 'update delivery';
  readonly #parts: { context: ContextComponent; link: ControllerLinkComponent };
  readonly #intervalMs: number | false;
  #job: PeriodicJob | undefined;

  constructor(
    parts: { context: ContextComponent; link: ControllerLinkComponent },
    intervalMs: number | false,
  ) {
    this.#parts = parts;
    this.#intervalMs = intervalMs;
  }

  async start(): Promise<void> {
    if (this.#intervalMs === false) return;
    this.#job = updateDeliveryJob(this.#parts.context.ctx, this.#parts.link.link.updates, this.#intervalMs);
    this.#job.start();
  }

  async stop(): Promise<void> {
    await this.#job?.stop();
  }
}

/**
 * Vacuum and analyze on the embedded database (foundation/db/embedded-vacuum.ts), which a PostgreSQL server's
 * own autovacuum does there: started on PGlite alone, and whether or not the other background jobs run, since
 * without it the database only grows.
 */
export class EmbeddedVacuumJob implements Part {
  readonly name = 'embedded database vacuum';
  readonly #parts: { context: ContextComponent; database: DatabaseComponent };
  #job: PeriodicJob | undefined;
  #vacuum: EmbeddedVacuum | undefined;

  constructor(parts: { context: ContextComponent; database: DatabaseComponent }) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    const { context, database } = this.#parts;
    if (database.handle.kind !== 'pglite') return;
    const { ctx } = context;
    const vacuum = new EmbeddedVacuum({
      db: ctx.db,
      quiet: () => ctx.foreground.quiet(VACUUM_NAPTIME_MS),
      log: ctx.log,
    });
    this.#vacuum = vacuum;
    this.#job = new PeriodicJob({
      name: 'embedded database vacuum',
      intervalMs: VACUUM_NAPTIME_MS,
      run: () => vacuum.pass(),
      log: ctx.log,
      outage: databaseOutage(ctx),
      firstAfterInterval: true,
    });
    this.#job.start();
  }

  async stop(): Promise<void> {
    this.#vacuum?.stop();
    await this.#job?.stop();
    this.#job = undefined;
    this.#vacuum = undefined;
  }
}

export class BackgroundJobs implements Part {
  readonly name = 'background jobs';
  readonly #context: ContextComponent;
  readonly #ackTimeoutMs: number | false;
  #jobs: PeriodicJob[] = [];

  /** `ackTimeoutMs`: the controllers' acknowledgement deadline; false turns the jobs off. */
  constructor(context: ContextComponent, ackTimeoutMs: number | false) {
    this.#context = context;
    this.#ackTimeoutMs = ackTimeoutMs;
  }

  async start(): Promise<void> {
    if (this.#ackTimeoutMs === false) return;
    this.#jobs = backgroundJobs(this.#context.ctx, this.#ackTimeoutMs);
    for (const job of this.#jobs) job.start();
  }

  async stop(): Promise<void> {
    for (const job of this.#jobs) await job.stop();
  }
}
