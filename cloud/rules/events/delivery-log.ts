import { type Selectable, sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { AttemptAnswer, DeliveryOutcome, EventDeliveriesTable } from '../../foundation/db/schema.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';
import { sentToCallback } from './callback-kinds.js';
import { webhookBody } from './webhook-message.js';

/**
 * What a company and the operators read of the delivery (docs/design.md section 6): the endpoint's state and
 * the delivery log, newest first, in pages. Read by the company area (cloud/faces/company-area/events-routes.tsx)
 * and the operator API (`GET /ops/companies/:id/events`).
 */

export interface EndpointState {
  url: string | null;
  /** Since when the endpoint is failing: nothing is sent until the address changes or a retry is asked. */
  failingSince: Date | null;
  /** No delivery before this, after a failed attempt. */
  pausedUntil: Date | null;
  lastError: string | null;
  /** The kinds of event it takes (./callback-kinds.ts); null for every kind. */
  kinds: string[] | null;
  /** Events for it not delivered yet, and of those the ones that failed at least once. */
  waiting: number;
  retrying: number;
}

export async function endpointState(ctx: CloudContext, companyId: number): Promise<EndpointState> {
  const company = await ctx.db
    .selectFrom('companies')
    .select([
      'callback_url',
      'callback_failing_since',
      'callback_failing_url',
      'callback_paused_until',
      'callback_last_error',
      'callback_kinds',
    ])
    .where('id', '=', companyId)
    .executeTakeFirstOrThrow();
  const counts = await ctx.db
    .selectFrom('events as event')
    .innerJoin('companies as company', 'company.id', 'event.company_id')
    .select([
      sql<number>`count(*)::integer`.as('waiting'),
      sql<number>`(count(*) filter (where event.attempts > 0))::integer`.as('retrying'),
    ])
    .where('event.company_id', '=', companyId)
    .where('event.delivered_at', 'is', null)
    .where(sentToCallback('event', 'company'))
    .executeTakeFirstOrThrow();
  // A failing endpoint whose address changed since is failing no more: the next claim resumes it.
  const failing =
    company.callback_failing_since !== null && company.callback_failing_url === company.callback_url;
  const now = ctx.clock.now();
  return {
    url: company.callback_url,
    failingSince: failing ? company.callback_failing_since : null,
    pausedUntil:
      company.callback_paused_until && company.callback_paused_until > now
        ? company.callback_paused_until
        : null,
    lastError: company.callback_last_error,
    kinds: company.callback_kinds,
    waiting: counts.waiting,
    retrying: counts.retrying,
  };
}

export interface LoggedAttempt {
  /** The log row's id, the cursor of the next page. */
  id: number;
  eventId: string;
  type: string;
  attempt: number;
  at: Date;
  url: string;
  outcome: DeliveryOutcome;
  status: number | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: Date | null;
}

export const LOG_PAGE = 50;

/** Which attempts a reader asks for: of one kind of event, delivered or failed, made in a span of time. */
export interface LogFilter {
  kind?: string | undefined;
  outcome?: 'delivered' | 'failed' | undefined;
  /** Attempts made at or after this instant. */
  from?: Date | undefined;
  /** Attempts made before this instant. */
  until?: Date | undefined;
}

/** The company's attempts, newest first, before the row `before` when given; `limit` at most. */
export async function deliveryLog(
  ctx: CloudContext,
  companyId: number,
  options: { before?: number | undefined; limit?: number } & LogFilter = {},
): Promise<LoggedAttempt[]> {
  let query = ctx.db
    .selectFrom('event_deliveries')
    .select([
      sql<string>`id::text`.as('id'),
      'event_id',
      'type',
      'attempt',
      'at',
      'url',
      'outcome',
      'status',
      'error',
      'duration_ms',
      'next_attempt_at',
    ])
    .where('company_id', '=', companyId)
    .orderBy('event_deliveries.id', 'desc')
    .limit(options.limit ?? LOG_PAGE);
  if (options.before !== undefined) query = query.where('event_deliveries.id', '<', String(options.before));
  if (options.kind !== undefined) query = query.where('type', '=', options.kind);
  if (options.outcome === 'delivered') query = query.where('outcome', '=', 'delivered');
  if (options.outcome === 'failed') query = query.where('outcome', '!=', 'delivered');
  if (options.from !== undefined) query = query.where('at', '>=', options.from);
  if (options.until !== undefined) query = query.where('at', '<', options.until);
  const rows = await query.execute();
  return rows.map(loggedAttempt);
}

/** A log row as readers take it. */
function loggedAttempt(
  row: Omit<Selectable<EventDeliveriesTable>, 'company_id' | 'sent_headers' | 'answer'>,
): LoggedAttempt {
  return {
    id: Number(row.id),
    eventId: row.event_id,
    type: row.type,
    attempt: row.attempt,
    at: row.at,
    url: row.url,
    outcome: row.outcome,
    status: row.status,
    error: row.error,
    durationMs: row.duration_ms,
    nextAttemptAt: row.next_attempt_at,
  };
}

/** One event of a company as the events page shows it: its body, where it stands, and every attempt. */
export interface EventRecord {
  id: string;
  type: string;
  at: Date;
  /** The bytes every attempt sends (./webhook-message.ts). */
  body: string;
  deliveredAt: Date | null;
  /** Whether it goes to the callback (./callback-kinds.ts): false for a kind the callback does not take. */
  toCallback: boolean;
  /** When the next attempt is due, while it is not delivered and goes to the callback. */
  nextAttemptAt: Date | null;
  attempts: AttemptRecord[];
}

export interface AttemptRecord extends LoggedAttempt {
  /** The headers sent; null on attempts logged before they were kept. */
  sent: Record<string, string> | null;
  answer: AttemptAnswer | null;
}

/** An event's attempts shown, newest first: resends are limited, so more than this is years of them. */
export const EVENT_ATTEMPTS_SHOWN = 100;

/** The company's event `eventId` with its attempts; null when it has no such event (another's, or purged). */
export async function eventRecord(
  ctx: CloudContext,
  companyId: number,
  eventId: string,
): Promise<EventRecord | null> {
  const event = await ctx.db
    .selectFrom('events as event')
    .innerJoin('companies as company', 'company.id', 'event.company_id')
    .select([
      'event.id',
      'event.type',
      'event.at',
      'event.data',
      'event.delivered_at',
      'event.next_attempt_at',
      sentToCallback('event', 'company').as('to_callback'),
    ])
    .where('event.id', '=', eventId)
    .where('event.company_id', '=', companyId)
    .executeTakeFirst();
  if (!event) return null;
  const rows = await ctx.db
    .selectFrom('event_deliveries')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('event_id', '=', eventId)
    .orderBy('id', 'desc')
    .limit(EVENT_ATTEMPTS_SHOWN)
    .execute();
  return {
    id: event.id,
    type: event.type,
    at: event.at,
    body: webhookBody(event),
    deliveredAt: event.delivered_at,
    toCallback: event.to_callback,
    nextAttemptAt: event.delivered_at === null && event.to_callback ? event.next_attempt_at : null,
    attempts: rows.map((row) => ({ ...loggedAttempt(row), sent: row.sent_headers, answer: row.answer })),
  };
}

/** The log and the endpoint as the operator API answers them, times in the API's form. */
export function describeEndpoint(state: EndpointState) {
  return {
    url: state.url,
    failing_since: state.failingSince ? formatTimestamp(state.failingSince) : null,
    paused_until: state.pausedUntil ? formatTimestamp(state.pausedUntil) : null,
    last_error: state.lastError,
    kinds: state.kinds,
    waiting: state.waiting,
    retrying: state.retrying,
  };
}

export function describeAttempt(attempt: LoggedAttempt) {
  return {
    id: attempt.id,
    event_id: attempt.eventId,
    type: attempt.type,
    attempt: attempt.attempt,
    at: formatTimestamp(attempt.at),
    outcome: attempt.outcome,
    status: attempt.status,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    next_attempt_at: attempt.nextAttemptAt ? formatTimestamp(attempt.nextAttemptAt) : null,
  };
}
