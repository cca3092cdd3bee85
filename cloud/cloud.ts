import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SigningKey } from '../shared/crypto/ed25519.js';
import { ACK_TIMEOUT_MS } from '../shared/limits.js';
import { createHttpServer, registerRoutes } from './app.js';
import { CompanyCache } from './auth/company-cache.js';
import { purgeNonces } from './auth/nonces.js';
import type { Broker } from './broker/broker.js';
import { startBroker } from './broker/start.js';
import { type Clock, systemClock } from './clock.js';
import { purgeIdempotencyKeys } from './company-api/idempotency.js';
import type { CloudConfig } from './config.js';
import type { CloudContext } from './context.js';
import { lockDataFolder, makePrivate, tighten } from './data-folder.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';
import type { HttpTimeouts } from './http/timeouts.js';
import { PeriodicJob } from './jobs/periodic.js';
import { type KeyFileFetcher, reconfirmDueKeys } from './keys/confirm.js';
import { fetchKeyFile } from './keys/keyfile-fetch.js';
import { UnansweredOpenings } from './opening/unanswered.js';
import { sweepExpired } from './requests/expiry.js';

export interface CloudOptions {
  config: CloudConfig;
  clock?: Clock;
  /** A database opened by the caller (tests share one per file); closed by the caller too. */
  database?: DatabaseHandle;
  fetchKeyFile?: KeyFileFetcher;
  /** Background jobs (expiry sweep, key re-confirmation, purges). Tests that drive them by hand turn them off. */
  jobs?: boolean;
  /** Options for the broker, such as a shorter acknowledgement timeout in tests. */
  ackTimeoutMs?: number;
  /** How this program is started, named to a second one that finds the data folder in use. */
  program?: string;
  /** The HTTP server's timeouts (cloud/http/timeouts.ts); tests use small ones. */
  httpTimeouts?: HttpTimeouts;
}

export interface RunningCloud {
  readonly baseUrl: string;
  readonly ctx: CloudContext;
  readonly app: FastifyInstance;
  readonly broker: Broker;
  readonly operatorToken: string;
  /** Where the generated operator token was written, when it was generated. */
  readonly operatorTokenFile: string | undefined;
  stop(): Promise<void>;
}

/**
 * Composes the cloud: database, signing key, broker, HTTP routes and background jobs, each started in order
 * and stopped in reverse.
 */
export async function startCloud(options: CloudOptions): Promise<RunningCloud> {
  const { config } = options;
  makePrivate(config.dataDir);
  const lock = ownsEmbeddedDatabase(options) ? lockDataFolder(config.dataDir, options.program) : null;
  let database: DatabaseHandle;
  try {
    database = options.database ?? (await openDatabase(config.database));
    // The embedded database writes its files open to everyone; only the folder's mode would guard them.
    if (lock) tighten(config.dataDir);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const closeDatabase = async () => {
    if (!options.database) await database.close();
    lock?.release();
  };
  const app = createHttpServer(config.logLevel, { timeouts: options.httpTimeouts });
  let listeningPort = config.port;
  const clock = options.clock ?? systemClock;
  const ctx: CloudContext = {
    config,
    db: database.db,
    clock,
    log: app.log,
    signingKey: loadSigningKey(config.signingKeyFile),
    fetchKeyFile:
      options.fetchKeyFile ??
      ((domain) =>
        fetchKeyFile(domain, config.devKeyfileUrl ? { devUrlTemplate: config.devKeyfileUrl } : {})),
    companies: new CompanyCache(clock),
    baseUrl: () => config.baseUrl ?? `http://localhost:${listeningPort}`,
  };
  const { token: operatorToken, file: operatorTokenFile } = loadOperatorToken(config);
  const jobs: PeriodicJob[] = [];
  let broker: Broker;
  try {
    broker = await startBroker(
      ctx,
      options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs },
    );
  } catch (error) {
    await closeDatabase();
    throw error;
  }
  try {
    await registerRoutes(app, { ctx, broker, operatorToken });
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    if (address && typeof address === 'object') listeningPort = address.port;
    if (options.jobs !== false) jobs.push(...backgroundJobs(ctx, options.ackTimeoutMs ?? ACK_TIMEOUT_MS));
    for (const job of jobs) job.start();
  } catch (error) {
    await app.close();
    await broker.stop();
    await closeDatabase();
    throw error;
  }
  return {
    baseUrl: ctx.baseUrl(),
    ctx,
    app,
    broker,
    operatorToken,
    operatorTokenFile,
    async stop() {
      for (const job of jobs) await job.stop();
      await app.close();
      await broker.stop();
      await closeDatabase();
    },
  };
}

/** The cloud opens the embedded database in its data folder itself, rather than being handed one. */
function ownsEmbeddedDatabase(options: CloudOptions): boolean {
  return !options.database && 'dataDir' in options.config.database;
}

function backgroundJobs(ctx: CloudContext, ackTimeoutMs: number): PeriodicJob[] {
  const job = (name: string, intervalMs: number, run: () => Promise<unknown>) =>
    new PeriodicJob({ name, intervalMs, run, log: ctx.log });
  const unanswered = new UnansweredOpenings(ctx, ackTimeoutMs);
  return [
    job('unanswered openings', 10_000, () => unanswered.settle()),
    job('expiry sweep', 30_000, () => sweepExpired(ctx)),
    job('key re-confirmation', 60_000, () => reconfirmDueKeys(ctx)),
    job('nonce purge', 60_000, () => purgeNonces(ctx)),
    job('idempotency purge', 600_000, () => purgeIdempotencyKeys(ctx)),
  ];
}

/** The cloud's Ed25519 key, made on first start. Instances that share a database must share this file. */
function loadSigningKey(file: string): SigningKey {
  if (existsSync(file)) return SigningKey.fromPem(readFileSync(file, 'utf8'));
  const key = SigningKey.generate();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, key.toPem(), { mode: 0o600, flag: 'wx' });
  return key;
}

/** OPERATOR_TOKEN, or one generated at first start into the data folder (decisions.md section 8). */
function loadOperatorToken(config: CloudConfig): { token: string; file: string | undefined } {
  if (config.operatorToken) return { token: config.operatorToken, file: undefined };
  const file = join(config.dataDir, 'operator-token');
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return { token: readFileSync(file, 'utf8').trim(), file };
}
