import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Database, DatabaseHandle } from '../db/database.js';
import type { DB } from '../db/schema.js';
import type { CloudMetrics, ScrapeReading } from './cloud-metrics.js';

/**
 * The gauges read when Prometheus scrapes (docs/design.md section 8.1). Each query is bounded: on PostgreSQL by
 * a `statement_timeout` of its own transaction, on both by a deadline after which the scrape goes on without
 * it. A query that fails or is late is logged, keeps its gauge's previous value, and never fails the scrape.
 */
export const SCRAPE_QUERY_TIMEOUT_MS = 2000;

/**
 * Tables counted exactly while they hold fewer rows than this; above it PostgreSQL's estimate
 * (`pg_class.reltuples`, kept by autovacuum) is given instead, so that a scrape never counts millions of nonces.
 */
export const EXACT_COUNT_LIMIT = 100_000;

export interface ScrapeSources {
  db: Database;
  database: Pick<DatabaseHandle, 'connections'>;
  controllers(): Promise<number>;
  log: FastifyBaseLogger;
  timeoutMs?: number;
}

export function registerScrapeGauges(metrics: CloudMetrics, sources: ScrapeSources): void {
  const reading = (name: string, read: () => Promise<number>) => bounded(name, read, sources);
  // Read first, as gauges are read in this order: before this scrape's own queries wait for a connection.
  const pool = () => sources.database.connections();
  metrics.gauge(
    'db_pool_connections',
    'Database connections open (PGlite: its one).',
    async () => pool().total,
  );
  metrics.gauge('db_pool_idle', 'Database connections open and unused.', async () => pool().idle);
  metrics.gauge('db_pool_waiting', 'Queries waiting for a database connection.', async () => pool().waiting);
  metrics.gauge(
    'controllers_connected',
    'Controllers with a session on the broker now (embedded: connected clients; external: reported online).',
    reading('controllers_connected', sources.controllers),
  );
  const events = shared(() => undeliveredEvents(sources));
  metrics.gauge(
    'events_pending',
    'Events waiting at endpoints that are not failing, once for each endpoint an event waits for.',
    reading('events_pending', async () => (await events()).pending),
  );
  metrics.gauge(
    'events_failing',
    'Events waiting at failing endpoints, once for each: held until its address changes or a retry.',
    reading('events_failing', async () => (await events()).failing),
  );
  metrics.gauge(
    'push_pending',
    'Notifications to customers waiting to be sent or retried (docs/design.md section 10.6).',
    reading('push_pending', () => pendingPushes(sources)),
  );
  metrics.gauge(
    'mail_pending',
    'E-mails of openings and daily digests waiting to be sent or retried (docs/design.md section 10.7).',
    reading('mail_pending', () => pendingMails(sources)),
  );
  metrics.gauge(
    'nonces',
    `Rows in nonces (signed calls of the last 10 min); exact below ${EXACT_COUNT_LIMIT}, estimated above.`,
    reading('nonces', () => tableRows(sources, 'nonces')),
  );
  metrics.gauge(
    'idempotency_keys',
    `Rows in idempotency (Idempotency-Key answers kept 24 h); exact below ${EXACT_COUNT_LIMIT}, estimated above.`,
    reading('idempotency_keys', () => tableRows(sources, 'idempotency')),
  );
}

/** `read` within the deadline, or undefined with a warning: the gauge then keeps its previous value. */
function bounded(name: string, read: () => Promise<number>, sources: ScrapeSources): ScrapeReading {
  const timeoutMs = sources.timeoutMs ?? SCRAPE_QUERY_TIMEOUT_MS;
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([read(), late]);
    } catch (error) {
      sources.log.warn(
        { err: error, gauge: name },
        'a metrics gauge could not be read; it keeps its last value',
      );
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** One query for the gauges read from it at the same scrape. */
function shared<T>(query: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () => {
    running ??= query().finally(() => {
      running = null;
    });
    return running;
  };
}

/** A query in a transaction of its own whose statements PostgreSQL stops after the deadline. */
function withStatementTimeout<T>(sources: ScrapeSources, query: (db: Database) => Promise<T>): Promise<T> {
  const timeoutMs = sources.timeoutMs ?? SCRAPE_QUERY_TIMEOUT_MS;
  return sources.db.transaction().execute(async (trx) => {
    await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
    return query(trx);
  });
}

/**
 * Counted on the partial index of events waiting at an endpoint (docs/design.md sections 6 and 6.2): an event
 * counts once for each endpoint it waits for, and one that no endpoint takes never waits. Failing as the console
 * says it (cloud/rules/events/delivery-log.ts, failingNow): an endpoint moved to another address since is failing no more.
 */
async function undeliveredEvents(sources: ScrapeSources): Promise<{ pending: number; failing: number }> {
  const { rows } = await withStatementTimeout(sources, (db) =>
    sql<{ pending: string; failing: string }>`
      select count(*) filter (where not failing) as pending, count(*) filter (where failing) as failing
        from (select endpoint.failing_since is not null
                     and endpoint.failing_url is not distinct from endpoint.url as failing
                from endpoint_events place join endpoints endpoint on endpoint.id = place.endpoint_id
               where place.delivered_at is null) as waiting`.execute(db),
  );
  return { pending: Number(rows[0]?.pending ?? 0), failing: Number(rows[0]?.failing ?? 0) };
}

/** Counted on the partial index of rows not sent nor given up. */
async function pendingPushes(sources: ScrapeSources): Promise<number> {
  const { rows } = await withStatementTimeout(sources, (db) =>
    sql<{ pending: string }>`
      select count(*) as pending from push_outbox where sent_at is null and gave_up_at is null`.execute(db),
  );
  return Number(rows[0]?.pending ?? 0);
}

/** Both e-mail tables, each counted on its partial index of rows not sent nor given up. */
async function pendingMails(sources: ScrapeSources): Promise<number> {
  const { rows } = await withStatementTimeout(sources, (db) =>
    sql<{ pending: string }>`
      select (select count(*) from opening_mail_outbox where sent_at is null and gave_up_at is null)
           + (select count(*) from mail_digests where sent_at is null and gave_up_at is null) as pending`.execute(
      db,
    ),
  );
  return Number(rows[0]?.pending ?? 0);
}

/**
 * The table's rows: PostgreSQL's estimate once it passes EXACT_COUNT_LIMIT (the count is then not run: an
 * uncorrelated subquery in a branch not taken is never evaluated), else an exact count. A table never analysed
 * has reltuples -1, and is counted.
 */
async function tableRows(
  sources: ScrapeSources,
  table: keyof DB & ('nonces' | 'idempotency'),
): Promise<number> {
  const { rows } = await withStatementTimeout(sources, (db) =>
    sql<{ rows: string }>`
      select case when c.reltuples > ${EXACT_COUNT_LIMIT} then c.reltuples::bigint
                  else (select count(*) from ${sql.table(table)}) end as rows
        from pg_class c where c.oid = ${table}::regclass`.execute(db),
  );
  return Number(rows[0]?.rows ?? 0);
}
