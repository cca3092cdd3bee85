import { type RawBuilder, type Selectable, sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { AttemptAnswer, DeliveryOutcome, EventDeliveriesTable } from '../../foundation/db/schema.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';
import { webhookBody } from './webhook-message.js';

/**
 * What a company and the operators read of the delivery (docs/design.md sections 6 and 6.2): each endpoint's
 * state and the delivery log, newest first, in pages. Read by the company area
 * (cloud/faces/company-area/events-routes.tsx) and the operator API (`GET /ops/companies/:id/events`).
 */

export interface EndpointState {
  id: number;
  url: string;
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

/**
 * Whether the endpoint `endpoint` is failing now: a failing endpoint whose address changed since is failing no
 * more, as the next claim resumes it (./delivery-store.ts). The one home of that reading for the queries of
 * cloud/rules; the metrics and the e-mails, below or beside this folder, say the same in their own SQL.
 */
export function failingNow(endpoint: string): RawBuilder<boolean> {
  const at = (column: string) => sql.ref(`${endpoint}.${column}`);
  return sql<boolean>`(${at('failing_since')} is not null and ${at('failing_url')} is not distinct from ${at('url')})`;
}

/** The company's endpoints with their state, oldest first: none when it has no callback address. */
export async function endpointStates(ctx: CloudContext, companyId: number): Promise<EndpointState[]> {
  const rows = await ctx.db
    .selectFrom('endpoints as endpoint')
    .leftJoin('endpoint_events as place', (join) =>
      join.onRef('place.endpoint_id', '=', 'endpoint.id').on('place.delivered_at', 'is', null),
    )
    .select([
      'endpoint.id',
      'endpoint.url',
      sql<Date | null>`case when ${failingNow('endpoint')} then endpoint.failing_since end`.as(
        'failing_since',
      ),
      'endpoint.paused_until',
      'endpoint.last_error',
      'endpoint.kinds',
      sql<number>`count(place.seq)::integer`.as('waiting'),
      sql<number>`(count(place.seq) filter (where place.attempts > 0))::integer`.as('retrying'),
    ])
    .where('endpoint.company_id', '=', companyId)
    .groupBy('endpoint.id')
    .orderBy('endpoint.id')
    .execute();
  const now = ctx.clock.now();
  return rows.map((row) => ({
    id: row.id,
    url: row.url,
    failingSince: row.failing_since === null ? null : new Date(row.failing_since),
    pausedUntil: row.paused_until && row.paused_until > now ? row.paused_until : null,
    lastError: row.last_error,
    kinds: row.kinds,
    waiting: row.waiting,
    retrying: row.retrying,
  }));
}

export interface LoggedAttempt {
  /** The log row's id, the cursor of the next page. */
  id: number;
  /** The endpoint it was made to; null on a previous release's attempts. */
  endpointId: number | null;
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

/**
 * Which attempts a reader asks for: to one endpoint, of one kind of event, delivered or failed, made in a span of
 * time.
 */
export interface LogFilter {
  endpoint?: number | undefined;
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
      'endpoint_id',
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
  if (options.endpoint !== undefined) query = query.where('endpoint_id', '=', options.endpoint);
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
    endpointId: row.endpoint_id,
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

/** One event of a company as the events page shows it: its body, where it stands with each endpoint, every attempt. */
export interface EventRecord {
  id: string;
  type: string;
  at: Date;
  /** The bytes every attempt sends (./webhook-message.ts). */
  body: string;
  /** Where it stands with each of the company's endpoints, oldest endpoint first. */
  endpoints: EventAtEndpoint[];
  attempts: AttemptRecord[];
}

export interface EventAtEndpoint {
  endpointId: number;
  url: string;
  /** Whether the endpoint gets it: false for a kind it does not take, or an event from before it was added. */
  sent: boolean;
  deliveredAt: Date | null;
  /** When the next attempt is due, while it is not delivered there. */
  nextAttemptAt: Date | null;
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
    .select(['event.id', 'event.type', 'event.at', 'event.data'])
    .where('event.id', '=', eventId)
    .where('event.company_id', '=', companyId)
    .executeTakeFirst();
  if (!event) return null;
  const places = await ctx.db
    .selectFrom('endpoints as endpoint')
    .leftJoin('endpoint_events as place', (join) =>
      join.onRef('place.endpoint_id', '=', 'endpoint.id').on('place.event_id', '=', eventId),
    )
    .select([
      'endpoint.id',
      'endpoint.url',
      'place.delivered_at',
      'place.next_attempt_at',
      'place.attempts',
      sql<boolean>`place.seq is not null`.as('placed'),
    ])
    .where('endpoint.company_id', '=', companyId)
    .orderBy('endpoint.id')
    .execute();
  const rows = await ctx.db
    .selectFrom('event_deliveries')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('event_id', '=', eventId)
    .orderBy('id', 'desc')
    .limit(EVENT_ATTEMPTS_SHOWN)
    .execute();
  const now = ctx.clock.now();
  return {
    id: event.id,
    type: event.type,
    at: event.at,
    body: webhookBody(event),
    endpoints: places.map((place) => ({
      endpointId: place.id,
      url: place.url,
      sent: place.placed,
      deliveredAt: place.delivered_at ?? null,
      nextAttemptAt:
        place.placed && place.delivered_at === null
          ? place.attempts === 0 || place.next_attempt_at === null
            ? now
            : place.next_attempt_at
          : null,
    })),
    attempts: rows.map((row) => ({ ...loggedAttempt(row), sent: row.sent_headers, answer: row.answer })),
  };
}

/** The log and the endpoints as the operator API answers them, times in the API's form. */
export function describeEndpoint(state: EndpointState) {
  return {
    id: state.id,
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
    endpoint_id: attempt.endpointId,
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
