import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { EVENT_KINDS } from '../../../shared/company-api/events.js';
import { type AttemptLimit, countAttempt } from '../../foundation/web/attempt-limit.js';
import { textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { readerZone, sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';
import { instantOf } from '../../foundation/zones/wall-clock.js';
import type { Company } from '../../rules/companies/companies.js';
import {
  deliveryLog,
  endpointStates,
  eventRecord,
  LOG_PAGE,
  type LogFilter,
} from '../../rules/events/delivery-log.js';
import { resendEvent, retryNow } from '../../rules/events/delivery-store.js';
import { findEndpoint } from '../../rules/events/endpoints.js';
import { ping } from '../../rules/events/event-data.js';
import { enqueueEvent } from '../../rules/events/outbox.js';
import { recordMemberAction } from '../../rules/member-actions/member-actions.js';
import { actorOf } from './company-access.js';
import { ENDPOINT_ID } from './endpoint-state.js';
import { EventPage } from './event-page.js';
import { type EventSide, onBothSides, type SideOf, sidePath, sideVisit } from './event-side.js';
import { EventsPage, type EventsPageProps, UNTIL_MINUTE_MS } from './events-page.js';

/**
 * A company's events (docs/design.md sections 6 and 6.2): every member reads each endpoint's state, the delivery
 * log and each event's page; the owner and developers send a test event (`ping`, through the outbox and the
 * signature like every event, to every endpoint), ask an endpoint for a retry, and have an event sent again to
 * an endpoint (viewers are refused in companyVisit). Test events and resends make the service post, so they
 * are limited per company.
 */
export const TEST_EVENTS: AttemptLimit = {
  bucket: 'test-events',
  max: 20,
  windowMs: 3600_000,
  message: (wait) => `Too many test events this hour; try again in ${wait}.`,
};

/** Resends make the service post, like test events: limited per company, more generously. */
export const RESENDS: AttemptLimit = {
  bucket: 'event-resends',
  max: 60,
  windowMs: 3600_000,
  message: (wait) => `Too many events sent again this hour; try again in ${wait}.`,
};

const pageQuery = z.object({
  before: z.coerce.number().int().positive().optional().catch(undefined),
  // An endpoint removed since still has its attempts in the log, for their 30 days.
  endpoint: ENDPOINT_ID.optional().catch(undefined),
  // A filter that makes no sense is dropped and the page shown, as on every list (docs/design.md section 11.4).
  kind: z.enum(EVENT_KINDS).optional().catch(undefined),
  outcome: z.enum(['delivered', 'failed']).optional().catch(undefined),
  // As a `datetime-local` field sends it, read in the reader's zone (localMoment below).
  from: z.string().max(32).optional().catch(undefined),
  until: z.string().max(32).optional().catch(undefined),
  done: z.enum(['test', 'retry']).optional().catch(undefined),
});

const eventQuery = z.object({ done: z.enum(['resent']).optional().catch(undefined) });

/** A `datetime-local` field's "2026-11-28T14:05" as the instant the reader means in `zone`; undefined if not one. */
function localMoment(text: string | undefined, zone: string): Date | undefined {
  const match = text ? /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})$/.exec(text) : null;
  if (!match) return undefined;
  return instantOf({ day: match[1]!, time: match[2]! }, zone) ?? undefined;
}

const DONE: Record<'test' | 'retry', string> = {
  test: "A test event joined the company's events; it goes to every endpoint, and its attempts appear in the log below once they are made.",
  retry: 'Delivery resumed: every event not delivered yet to that endpoint is sent again, in order.',
};

const RESENT_HERE = 'The event is sent again, with the same webhook-id and body; its attempt appears below.';

const EVENT_ID = z.uuid();
const UNKNOWN_EVENT = 'No such event of the company: it may be over 30 days old.';
const UNKNOWN_ENDPOINT =
  'No such endpoint of the company: it may have been removed. The list below is up to date.';

/** The company's events, and under `/company/<id>/sandbox/events` its sandbox's (docs/design.md section 11.9). */
export async function eventsRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  await onBothSides(deps.ctx, (prefix, sideOf) => sideRoutes(app, deps, prefix, sideOf));
}

/** Where a side's pages are, and how the company's side is found (null: it has none yet, see the sandbox page). */
async function sideRoutes(
  app: FastifyInstance,
  deps: WebDeps,
  prefix: string,
  sideOf: SideOf,
): Promise<void> {
  const { ctx } = deps;

  const visiting = (request: FastifyRequest, reply: FastifyReply) => sideVisit(deps, request, reply, sideOf);

  const props = async (
    at: { company: Company; side: EventSide },
    before: number | undefined,
    filter: LogFilter = {},
  ): Promise<Omit<EventsPageProps, 'page'>> => {
    const holderId = at.side.holder.id;
    const [endpoints, rows] = await Promise.all([
      endpointStates(ctx, holderId),
      deliveryLog(ctx, holderId, { before, limit: LOG_PAGE + 1, ...filter }),
    ]);
    const log = rows.slice(0, LOG_PAGE);
    const older = rows.length > LOG_PAGE ? log[log.length - 1]?.id : undefined;
    return { company: at.company, side: at.side, endpoints, log, older, before, filter };
  };

  /** The page again, its newest log unfiltered, with why the form was refused. */
  const refused = async (
    request: FastifyRequest,
    reply: FastifyReply,
    at: { company: Company; side: EventSide },
    status: number,
    text: string,
  ) =>
    sendPage(
      reply,
      <EventsPage
        page={pageContext(request, reply)}
        {...(await props(at, undefined))}
        notice={{ tone: 'error', text }}
      />,
      status,
    );

  app.get(`${prefix}/events`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const query = pageQuery.parse(request.query);
    const notice = query.done ? { tone: 'ok' as const, text: DONE[query.done] } : undefined;
    const page = pageContext(request, reply);
    const zone = readerZone(page);
    const until = localMoment(query.until, zone);
    return sendPage(
      reply,
      <EventsPage
        page={page}
        {...(await props(at, query.before, {
          endpoint: query.endpoint,
          kind: query.kind,
          outcome: query.outcome,
          from: localMoment(query.from, zone),
          until: until && new Date(until.getTime() + UNTIL_MINUTE_MS),
        }))}
        notice={notice}
      />,
    );
  });

  app.get(`${prefix}/events/:eventId`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const eventId = EVENT_ID.safeParse((request.params as { eventId?: unknown }).eventId);
    const event = eventId.success ? await eventRecord(ctx, at.side.holder.id, eventId.data) : null;
    if (!event) return refused(request, reply, at, 404, UNKNOWN_EVENT);
    const query = eventQuery.parse(request.query);
    return sendPage(
      reply,
      <EventPage
        page={pageContext(request, reply)}
        company={at.company}
        side={at.side}
        event={event}
        notice={query.done ? { tone: 'ok', text: RESENT_HERE } : undefined}
      />,
    );
  });

  app.post(`${prefix}/events/test`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const { holder } = at.side;
    const refuse = (status: number, text: string) => refused(request, reply, at, status, text);
    const endpoints = await endpointStates(ctx, holder.id);
    if (endpoints.length === 0) return refuse(409, 'Add an endpoint first: a test event goes to each one.');
    const counted = await onForm(reply, ['too_many_attempts'], () =>
      countAttempt(ctx, TEST_EVENTS, String(holder.id)),
    );
    if (!counted.ok) return refuse(counted.status, counted.message);
    const now = ctx.clock.now();
    await ctx.db.transaction().execute(async (trx) => {
      const id = await enqueueEvent(trx, { companyId: holder.id, type: 'ping', at: now, data: ping() });
      await recordMemberAction(trx, now, {
        companyId: holder.id,
        by: actorOf(at.visit),
        name: 'test-event',
        detail: id,
      });
    });
    return reply.redirect(`${sidePath(at.side, 'events')}?done=test`, 303);
  });

  app.post(`${prefix}/events/:eventId/resend`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const { holder } = at.side;
    const refuse = (status: number, text: string) => refused(request, reply, at, status, text);
    const eventId = EVENT_ID.safeParse((request.params as { eventId?: unknown }).eventId);
    if (!eventId.success) return refuse(404, UNKNOWN_EVENT);
    const endpointId = ENDPOINT_ID.safeParse(textField(request.body, 'endpoint'));
    const endpoint = endpointId.success ? await findEndpoint(ctx.db, holder.id, endpointId.data) : null;
    if (!endpoint) return refuse(404, UNKNOWN_ENDPOINT);
    const counted = await onForm(reply, ['too_many_attempts'], () =>
      countAttempt(ctx, RESENDS, String(holder.id)),
    );
    if (!counted.ok) return refuse(counted.status, counted.message);
    const to = { companyId: holder.id, endpointId: endpoint.id };
    const resent = await resendEvent(ctx, to, eventId.data, actorOf(at.visit));
    if (resent === 'unknown') return refuse(404, UNKNOWN_EVENT);
    if (resent === 'waiting') {
      return refuse(
        409,
        `That event is not delivered to ${endpoint.url} yet: it is on its way there already.`,
      );
    }
    return reply.redirect(`${sidePath(at.side, 'events')}/${eventId.data}?done=resent`, 303);
  });

  /** "Retry now" on one endpoint: the others keep their own schedules. */
  app.post(`${prefix}/events/retry`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpointId = ENDPOINT_ID.safeParse(textField(request.body, 'endpoint'));
    const to = endpointId.success ? { companyId: at.side.holder.id, endpointId: endpointId.data } : null;
    const retried = to ? await retryNow(ctx, to, actorOf(at.visit)) : null;
    if (retried === null) return refused(request, reply, at, 404, UNKNOWN_ENDPOINT);
    return reply.redirect(`${sidePath(at.side, 'events')}?done=retry`, 303);
  });
}
