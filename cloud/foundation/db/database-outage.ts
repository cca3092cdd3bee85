import type { FastifyBaseLogger } from 'fastify';

/**
 * The database out of reach (cloud/README.md, "Errors"; docs/design.md section 8.1): the one place that tells a
 * connection failure from any other, and that logs an outage once when it starts and once when it ends, rather
 * than a stack for every call and background tick that meets it.
 */

/** The clock the cloud passes everything (foundation/clock.ts), named here so that db/ stays below it. */
type Clock = { now(): Date };

/** What a caller that met the outage is told to wait before retrying (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;

/** Node's socket errors that mean the server is not there, or went away. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** PostgreSQL's: admin_shutdown, crash_shutdown, cannot_connect_now; class 08 is connection exceptions. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03']);

/** pg's own words for a connection lost or never had, and for a pool that could not hand one out in time. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Connection ended',
];

/** The error, or one it wraps (`cause`, an AggregateError's `errors`), is a connection failure. */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || /^08/.test(code))) {
    return true;
  }
  if (DRIVER_MESSAGES.some((words) => error.message.includes(words))) return true;
  const inner = error instanceof AggregateError ? error.errors : [];
  return [error.cause, ...inner].some((wrapped) => isDatabaseUnreachable(wrapped, depth + 1));
}

/** One outage at a time: its first failure, how many followed, and when it ended. */
export class DatabaseOutage {
  readonly #log: FastifyBaseLogger;
  readonly #clock: Clock;
  #since: Date | null = null;
  #failures = 0;

  constructor(log: FastifyBaseLogger, clock: Clock) {
    this.#log = log;
    this.#clock = clock;
  }

  get active(): boolean {
    return this.#since !== null;
  }

  /**
   * Counts `error` when it is a connection failure, logging the outage's first one: true, and the caller logs
   * nothing of its own. False for any other error, which the caller handles as before.
   */
  failed(error: unknown, where: string): boolean {
    if (!isDatabaseUnreachable(error)) return false;
    this.#failures += 1;
    if (this.#since === null) {
      this.#since = this.#clock.now();
      const reason = error instanceof Error ? error.message : String(error);
      this.#log.error(
        { where, reason, failures: this.#failures },
        'database unreachable; calls answer 503 unavailable and failures are counted until it answers again',
      );
    }
    return true;
  }

  /** The database answered: the outage, if there was one, ends here, in one line. */
  answered(): void {
    if (this.#since === null) return;
    const seconds = Math.round((this.#clock.now().getTime() - this.#since.getTime()) / 1000);
    this.#log.warn(
      { failures: this.#failures, seconds },
      `database reachable again after ${this.#failures} failures over ${seconds} s`,
    );
    this.#since = null;
    this.#failures = 0;
  }
}

const outages = new WeakMap<object, DatabaseOutage>();

/**
 * The one outage record of a database, shared by everything that queries it (the HTTP error handlers, the
 * background jobs), made with the log and clock of the first part that asks.
 */
export function databaseOutage(ctx: { db: object; log: FastifyBaseLogger; clock: Clock }): DatabaseOutage {
  let outage = outages.get(ctx.db);
  if (!outage) {
    outage = new DatabaseOutage(ctx.log, ctx.clock);
    outages.set(ctx.db, outage);
  }
  return outage;
}
