import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { AttemptAnswer, DeliveryOutcome } from '../../foundation/db/schema.js';
import { queueCompanyMail } from '../company-mails/company-mail-outbox.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { EndpointRef } from './endpoints.js';
import { wakeEventDelivery } from './events-wake.js';
import type { OutboxEvent } from './webhook-message.js';

/**
 * What the delivery of events keeps in the database (docs/design.md sections 6 and 6.2): which worker has which
 * endpoint's events, where each event stands with each endpoint (`endpoint_events`), what each attempt did, the
 * endpoint's state, and the purges. Times are the cloud's clock (`ctx.clock`), so the retry schedule and the
 * leases move with a test's fake clock.
 */

/** An endpoint whose due events a worker now has, until its lease ends. */
export interface ClaimedEndpoint {
  endpointId: number;
  companyId: number;
  url: string;
  /** It was failing and its address has changed since: its events start afresh. */
  resumed: boolean;
  /** A company's sandbox (docs/design.md section 11.9): its events say so. */
  sandbox: boolean;
}

/**
 * Gives this worker up to `limit` endpoints with events to send, each for `leaseMs`, taking the endpoints it
 * served least recently first. An endpoint is taken by one worker at a time: the rows are locked `for no key
 * update skip locked` (two workers claiming at once each skip what the other locks; `no key` so that writing an
 * event, which locks its endpoints `for key share` as it gives them their places, never waits for a claim), and
 * the lease keeps it theirs once the claim commits. An endpoint is due when it is neither failing (unless its
 * address changed since it failed) nor paused after a failure, and has an event not attempted yet or whose retry
 * is due. Each endpoint of a company is served on its own: a receiver that is down holds up only its own events.
 */
export async function claimEndpoints(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedEndpoint[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  // One statement, committed on its own: a claim is what every commit that wrote an event wakes, so it costs one
  // round trip (on PGlite's one connection too). Restarting a resumed endpoint's schedule can follow it, since
  // the lease already keeps the endpoint to this worker.
  const { rows } = await sql<{
    id: number;
    company_id: number;
    url: string;
    resumed: boolean;
    sandbox: boolean;
  }>`
      with due as (
        select en.id, en.failing_since is not null as resumed
          from endpoints en
         where (en.lease_until is null or en.lease_until <= ${now})
           and (
             (en.failing_since is null
              and (en.paused_until is null or en.paused_until <= ${now})
              and exists (select 1 from endpoint_events place
                           where place.endpoint_id = en.id and place.delivered_at is null
                             and (place.attempts = 0 or place.next_attempt_at <= ${now})))
             or
             (en.failing_since is not null
              and en.failing_url is distinct from en.url
              and exists (select 1 from endpoint_events place
                           where place.endpoint_id = en.id and place.delivered_at is null))
           )
         order by en.lease_until nulls first, en.id
         limit ${options.limit}
         for no key update of en skip locked
      )
      update endpoints en
         set lease_until = ${leaseUntil},
             failing_since = null,
             failing_url = null,
             paused_until = null
        from due, companies c
       where en.id = due.id and c.id = en.company_id
      returning en.id, en.company_id, en.url, due.resumed, c.sandbox_of is not null as sandbox`.execute(
    ctx.db,
  );
  const resumed = rows.filter((row) => row.resumed).map((row) => row.id);
  if (resumed.length > 0) await restartSchedules(ctx.db, resumed, now);
  return rows.map((row) => ({
    endpointId: row.id,
    companyId: row.company_id,
    url: row.url,
    resumed: row.resumed,
    sandbox: row.sandbox,
  }));
}

/**
 * An event as the worker sends it, with the attempts it had so far at this endpoint and how many of them came
 * before its retry schedule last began ("Retry now", a resumed endpoint): the schedule counts only those after.
 */
export interface DueEvent extends OutboxEvent {
  attempts: number;
  schedule_from: number;
}

/**
 * The endpoint's events to send now, in the order they were written, a test event ahead of them: those not
 * attempted yet and those whose retry is due. The worker sends them one after another, so an event never goes
 * before an earlier one has been delivered to the endpoint or has failed its first attempt there.
 */
export async function dueEvents(ctx: CloudContext, endpointId: number, limit: number): Promise<DueEvent[]> {
  const now = ctx.clock.now();
  return (
    ctx.db
      .selectFrom('endpoint_events as place')
      .innerJoin('events as event', 'event.id', 'place.event_id')
      .select(['event.id', 'event.type', 'event.data', 'event.at', 'place.attempts', 'place.schedule_from'])
      .where('place.endpoint_id', '=', endpointId)
      .where('place.delivered_at', 'is', null)
      .where((eb) => eb.or([eb('place.attempts', '=', 0), eb('place.next_attempt_at', '<=', now)]))
      // A test event first: a member who presses "Send a test event" is checking the endpoint now, and a test
      // event reports no change, so no order of changes is broken by it going ahead.
      .orderBy(sql`event.type = 'ping'`, 'desc')
      .orderBy('place.seq')
      .limit(limit)
      .execute()
  );
}

/** One attempt, as the delivery log keeps it. */
export interface Attempt {
  event: DueEvent;
  at: Date;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** When it is tried again; null when delivered, or when this was its last attempt. */
  nextAttemptAt: Date | null;
  /** The headers sent, and what came back, for the log (docs/design.md section 6). */
  sent: Record<string, string>;
  answer: AttemptAnswer | null;
}

/**
 * Writes what a worker's turn with an endpoint did, in one transaction, and gives the endpoint back: the events
 * delivered, the one that failed (a turn ends at its first failure) with its next attempt, a row per attempt in
 * the delivery log, and the endpoint's state: paused after a failure, failing after a last attempt. An event
 * delivered is marked so on `events` too (`delivered_at`, the first delivery to any endpoint): what a previous
 * release reads, and what tells a held event from a sent one (./held-events.ts).
 */
export async function recordTurn(
  ctx: CloudContext,
  turn: { endpoint: ClaimedEndpoint; attempts: Attempt[]; pauseMs: number },
): Promise<void> {
  const { endpoint } = turn;
  const now = ctx.clock.now();
  const delivered = turn.attempts.filter((attempt) => attempt.error === null);
  const failed = turn.attempts.find((attempt) => attempt.error !== null);
  const failing = failed !== undefined && failed.nextAttemptAt === null;
  await ctx.db.transaction().execute(async (trx) => {
    if (delivered.length > 0) {
      const ids = delivered.map((attempt) => attempt.event.id);
      await trx
        .updateTable('endpoint_events')
        .set((eb) => ({ delivered_at: now, attempts: eb('attempts', '+', 1) }))
        .where('endpoint_id', '=', endpoint.endpointId)
        .where('event_id', 'in', ids)
        .execute();
      await trx
        .updateTable('events')
        .set({ delivered_at: now })
        .where('id', 'in', ids)
        .where('delivered_at', 'is', null)
        .execute();
    }
    if (failed) {
      await trx
        .updateTable('endpoint_events')
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          next_attempt_at: failed.nextAttemptAt ?? now,
        }))
        .where('endpoint_id', '=', endpoint.endpointId)
        .where('event_id', '=', failed.event.id)
        .execute();
    }
    if (turn.attempts.length > 0) {
      await trx
        .insertInto('event_deliveries')
        .values(
          turn.attempts.map((attempt) => ({
            company_id: endpoint.companyId,
            endpoint_id: endpoint.endpointId,
            event_id: attempt.event.id,
            type: attempt.event.type,
            attempt: attempt.event.attempts + 1,
            at: attempt.at,
            url: endpoint.url,
            outcome: outcomeOf(attempt),
            status: attempt.status,
            error: attempt.error,
            duration_ms: Math.round(attempt.durationMs),
            next_attempt_at: attempt.nextAttemptAt,
            sent_headers: JSON.stringify(attempt.sent),
            answer: attempt.answer ? JSON.stringify(attempt.answer) : null,
          })),
        )
        .execute();
    }
    await trx
      .updateTable('endpoints')
      .set({
        lease_until: now,
        ...(failed ? { paused_until: new Date(now.getTime() + turn.pauseMs), last_error: failed.error } : {}),
        ...(failing ? { failing_since: now, failing_url: endpoint.url } : {}),
      })
      .where('id', '=', endpoint.endpointId)
      .execute();
    // The members hear of it once, when it starts: no further attempt is made until someone acts.
    if (failing) {
      await queueCompanyMail(trx, {
        companyId: endpoint.companyId,
        endpointId: endpoint.endpointId,
        kind: 'endpoint_failing',
        detail: failed.error,
        now,
      });
    }
  });
}

function outcomeOf(attempt: Attempt): DeliveryOutcome {
  if (attempt.error === null) return 'delivered';
  return attempt.nextAttemptAt === null ? 'failing' : 'retry';
}

/**
 * A member asked for a retry: the endpoint is no longer failing nor paused, and every event it has not received
 * is due now and starts the schedule afresh, in order. Wakes the workers. Returns how many are due, or null when
 * the company has no such endpoint.
 */
export async function retryNow(
  ctx: CloudContext,
  endpoint: EndpointRef,
  by?: ActingMember,
): Promise<number | null> {
  const now = ctx.clock.now();
  const { companyId, endpointId } = endpoint;
  return ctx.db.transaction().execute(async (trx) => {
    const found = await trx
      .updateTable('endpoints')
      .set({ failing_since: null, failing_url: null, paused_until: null })
      .where('id', '=', endpointId)
      .where('company_id', '=', companyId)
      .returning('url')
      .executeTakeFirst();
    if (!found) return null;
    const count = await restartSchedules(trx, [endpointId], now);
    await wakeEventDelivery(trx);
    const detail = `${count} waiting ${count === 1 ? 'event' : 'events'} at ${found.url}`;
    if (by) await recordMemberAction(trx, now, { companyId, by, name: 'retry-now', detail });
    return count;
  });
}

/**
 * A member asked to have an event sent to an endpoint again, delivered there or never taken by it ("Send it
 * anyway", docs/design.md section 6): it is due now with a fresh schedule, its attempts there counting on, so it
 * goes with the same `webhook-id` and body, in its place among any events still waiting, and a change of kinds
 * leaves it (`asked`). Says what became of the ask: sent again, already on its way, or no such event or endpoint
 * of the company (another's, removed, or purged after its 30 days). Wakes the workers.
 */
export async function resendEvent(
  ctx: CloudContext,
  endpoint: EndpointRef,
  eventId: string,
  by: ActingMember,
): Promise<'resent' | 'waiting' | 'unknown'> {
  const now = ctx.clock.now();
  const { companyId, endpointId } = endpoint;
  return ctx.db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('events as event')
      .innerJoin('endpoints as endpoint', 'endpoint.company_id', 'event.company_id')
      .leftJoin('endpoint_events as place', (join) =>
        join.onRef('place.event_id', '=', 'event.id').onRef('place.endpoint_id', '=', 'endpoint.id'),
      )
      .select([
        'event.seq',
        'endpoint.url',
        'place.delivered_at',
        sql<boolean>`place.seq is not null`.as('placed'),
      ])
      .where('event.id', '=', eventId)
      .where('event.company_id', '=', companyId)
      .where('endpoint.id', '=', endpointId)
      .executeTakeFirst();
    if (!found) return 'unknown';
    if (found.placed && found.delivered_at === null) return 'waiting';
    await trx
      .insertInto('endpoint_events')
      .values({
        endpoint_id: endpointId,
        event_id: eventId,
        seq: found.seq,
        asked: true,
        next_attempt_at: now,
      })
      .onConflict((conflict) =>
        conflict.columns(['endpoint_id', 'seq']).doUpdateSet((eb) => ({
          delivered_at: null,
          asked: true,
          schedule_from: eb.ref('endpoint_events.attempts'),
          next_attempt_at: now,
        })),
      )
      .execute();
    await wakeEventDelivery(trx);
    const detail = `${eventId} to ${found.url}`;
    await recordMemberAction(trx, now, { companyId, by, name: 'event-resent', detail });
    return 'resent';
  });
}

async function restartSchedules(
  trx: Pick<CloudContext['db'], 'updateTable'>,
  endpointIds: number[],
  now: Date,
): Promise<number> {
  const result = await trx
    .updateTable('endpoint_events')
    .set((eb) => ({ schedule_from: eb.ref('attempts'), next_attempt_at: now }))
    .where('endpoint_id', 'in', endpointIds)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How long events and their log are kept (docs/design.md section 6). */
export const KEEP_EVENTS_MS = 30 * 24 * 3600_000;

/**
 * Outbox hygiene: events, delivered or not, with their places at the endpoints, and the delivery log go 30 days
 * after they were made; the held events of a company without an endpoint go once the retry window (`heldMs`) has
 * passed, since nothing would ever send them.
 */
export async function purgeEvents(
  ctx: CloudContext,
  heldMs: number,
): Promise<{ events: number; unaddressed: number; log: number }> {
  const now = ctx.clock.now().getTime();
  const old = new Date(now - KEEP_EVENTS_MS);
  const events = await ctx.db.deleteFrom('events').where('at', '<', old).executeTakeFirst();
  const unaddressed = await ctx.db
    .deleteFrom('events')
    .where('at', '<', new Date(now - heldMs))
    .where('delivered_at', 'is', null)
    .where((eb) => eb('company_id', 'not in', eb.selectFrom('endpoints').select('endpoints.company_id')))
    .executeTakeFirst();
  const log = await ctx.db.deleteFrom('event_deliveries').where('at', '<', old).executeTakeFirst();
  return {
    events: Number(events.numDeletedRows),
    unaddressed: Number(unaddressed.numDeletedRows),
    log: Number(log.numDeletedRows),
  };
}
