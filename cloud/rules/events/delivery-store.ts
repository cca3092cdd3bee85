import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { AttemptAnswer, DeliveryOutcome } from '../../foundation/db/schema.js';
import { queueCompanyMail } from '../company-mails/company-mail-outbox.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import { sentToCallback } from './callback-kinds.js';
import { wakeEventDelivery } from './events-wake.js';
import type { OutboxEvent } from './webhook-message.js';

/**
 * What the delivery of events keeps in the database (docs/design.md section 6): which worker has which
 * company's events, what each attempt did, the endpoint's state, and the purges. Times are the cloud's clock
 * (`ctx.clock`), so the retry schedule and the leases move with a test's fake clock.
 */

/** A company whose due events a worker now has, until its lease ends. */
export interface ClaimedCompany {
  companyId: number;
  url: string;
  /** Its endpoint was failing and its callback address has changed since: its events start afresh. */
  resumed: boolean;
  /** A company's sandbox (docs/design.md section 11.9): its events say so. */
  sandbox: boolean;
}

/**
 * Gives this worker up to `limit` companies with events to send, each for `leaseMs`, taking the companies it
 * served least recently first. A company is taken by one worker at a time: the rows are locked `for no key
 * update skip locked` (two workers claiming at once each skip what the other locks; `no key` so that inserting
 * an event, which locks its company `for key share`, never waits for a claim), and the lease keeps it theirs
 * once the claim commits. A company is due when it has a callback address, is neither failing (unless the
 * address changed since it failed) nor paused after a failure, and has an event for the callback (of a kind it
 * takes, ./callback-kinds.ts) not attempted yet or whose retry is due.
 */
export async function claimCompanies(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedCompany[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  // One statement, committed on its own: a claim is what every commit that wrote an event wakes, so it costs one
  // round trip (on PGlite's one connection too). Restarting a resumed company's schedule can follow it, since the
  // lease already keeps the company to this worker.
  const { rows } = await sql<{ id: number; callback_url: string; resumed: boolean; sandbox: boolean }>`
      with due as (
        select c.id, c.callback_failing_since is not null as resumed
          from companies c
         where c.callback_url is not null
           and (c.callback_lease_until is null or c.callback_lease_until <= ${now})
           and (
             (c.callback_failing_since is null
              and (c.callback_paused_until is null or c.callback_paused_until <= ${now})
              and exists (select 1 from events e
                           where e.company_id = c.id and e.delivered_at is null and ${sentToCallback('e', 'c')}
                             and (e.attempts = 0 or e.next_attempt_at <= ${now})))
             or
             (c.callback_failing_since is not null
              and c.callback_failing_url is distinct from c.callback_url
              and exists (select 1 from events e
                           where e.company_id = c.id and e.delivered_at is null and ${sentToCallback('e', 'c')}))
           )
         order by c.callback_lease_until nulls first, c.id
         limit ${options.limit}
         for no key update of c skip locked
      )
      update companies c
         set callback_lease_until = ${leaseUntil},
             callback_failing_since = null,
             callback_failing_url = null,
             callback_paused_until = null
        from due
       where c.id = due.id
      returning c.id, c.callback_url, due.resumed, c.sandbox_of is not null as sandbox`.execute(ctx.db);
  const resumed = rows.filter((row) => row.resumed).map((row) => row.id);
  if (resumed.length > 0) await restartSchedules(ctx.db, resumed, now);
  return rows.map((row) => ({
    companyId: row.id,
    url: row.callback_url,
    resumed: row.resumed,
    sandbox: row.sandbox,
  }));
}

/**
 * An event as the worker sends it, with the attempts it had so far and how many of them came before its retry
 * schedule last began ("Retry now", a resumed endpoint): the schedule counts only those after.
 */
export interface DueEvent extends OutboxEvent {
  attempts: number;
  schedule_from: number;
}

/**
 * The company's events to send now, in the order they were written, a test event ahead of them: those for
 * the callback (./callback-kinds.ts) not attempted yet and those whose retry is due. The worker sends them one after another, so an event never goes before an earlier one of the
 * same company has been delivered or has failed its first attempt.
 */
export async function dueEvents(ctx: CloudContext, companyId: number, limit: number): Promise<DueEvent[]> {
  const now = ctx.clock.now();
  return (
    ctx.db
      .selectFrom('events as event')
      .innerJoin('companies as company', 'company.id', 'event.company_id')
      .select(['event.id', 'event.type', 'event.data', 'event.at', 'event.attempts', 'event.schedule_from'])
      .where('event.company_id', '=', companyId)
      .where('event.delivered_at', 'is', null)
      .where(sentToCallback('event', 'company'))
      .where((eb) => eb.or([eb('event.attempts', '=', 0), eb('event.next_attempt_at', '<=', now)]))
      // A test event first: a member who presses "Send a test event" is checking the endpoint now, and a test
      // event reports no change, so no order of changes is broken by it going ahead.
      .orderBy(sql`event.type = 'ping'`, 'desc')
      .orderBy('event.seq')
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
 * Writes what a worker's turn with a company did, in one transaction, and gives the company back: the events
 * delivered, the one that failed (a turn ends at its first failure) with its next attempt, a row per attempt in
 * the delivery log, and the endpoint's state: paused after a failure, failing after a last attempt.
 */
export async function recordTurn(
  ctx: CloudContext,
  turn: { company: ClaimedCompany; attempts: Attempt[]; pauseMs: number },
): Promise<void> {
  const now = ctx.clock.now();
  const delivered = turn.attempts.filter((attempt) => attempt.error === null);
  const failed = turn.attempts.find((attempt) => attempt.error !== null);
  const failing = failed !== undefined && failed.nextAttemptAt === null;
  await ctx.db.transaction().execute(async (trx) => {
    if (delivered.length > 0) {
      await trx
        .updateTable('events')
        .set((eb) => ({ delivered_at: now, attempts: eb('attempts', '+', 1) }))
        .where(
          'id',
          'in',
          delivered.map((attempt) => attempt.event.id),
        )
        .execute();
    }
    if (failed) {
      await trx
        .updateTable('events')
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          next_attempt_at: failed.nextAttemptAt ?? now,
        }))
        .where('id', '=', failed.event.id)
        .execute();
    }
    if (turn.attempts.length > 0) {
      await trx
        .insertInto('event_deliveries')
        .values(
          turn.attempts.map((attempt) => ({
            company_id: turn.company.companyId,
            event_id: attempt.event.id,
            type: attempt.event.type,
            attempt: attempt.event.attempts + 1,
            at: attempt.at,
            url: turn.company.url,
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
      .updateTable('companies')
      .set({
        callback_lease_until: now,
        ...(failed
          ? {
              callback_paused_until: new Date(now.getTime() + turn.pauseMs),
              callback_last_error: failed.error,
            }
          : {}),
        ...(failing ? { callback_failing_since: now, callback_failing_url: turn.company.url } : {}),
      })
      .where('id', '=', turn.company.companyId)
      .execute();
    // The members hear of it once, when it starts: no further attempt is made until someone acts.
    if (failing) {
      await queueCompanyMail(trx, {
        companyId: turn.company.companyId,
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
 * The company asked for a retry: its endpoint is no longer failing nor paused, and every event it has not
 * received is due now and starts the schedule afresh, in order. Wakes the workers. Returns how many are due.
 */
export async function retryNow(ctx: CloudContext, companyId: number, by?: ActingMember): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('companies')
      .set({ callback_failing_since: null, callback_failing_url: null, callback_paused_until: null })
      .where('id', '=', companyId)
      .execute();
    const count = await restartSchedules(trx, [companyId], now);
    await wakeEventDelivery(trx);
    const detail = `${count} waiting ${count === 1 ? 'event' : 'events'}`;
    if (by) await recordMemberAction(trx, now, { companyId, by, name: 'retry-now', detail });
    return count;
  });
}

/**
 * A member asked to have a delivered event sent again, or one the callback did not take (docs/design.md section
 * 6): it is due now with a fresh schedule, its attempts counting on, so it goes with the same `webhook-id` and body, in its place among any
 * events still waiting. Says what became of the ask: sent again, already on its way, or no such event of the
 * company (another's, or purged after its 30 days). Wakes the workers.
 */
export async function resendEvent(
  ctx: CloudContext,
  companyId: number,
  eventId: string,
  by: ActingMember,
): Promise<'resent' | 'waiting' | 'unknown'> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const event = await trx
      .selectFrom('events as event')
      .innerJoin('companies as company', 'company.id', 'event.company_id')
      .select(['event.delivered_at', sentToCallback('event', 'company').as('to_callback')])
      .where('event.id', '=', eventId)
      .where('event.company_id', '=', companyId)
      .forUpdate('event')
      .executeTakeFirst();
    if (!event) return 'unknown';
    if (event.delivered_at === null && event.to_callback) return 'waiting';
    // Asked for by name, it goes whatever its kind: this event, once, not its kind from now on.
    await trx
      .updateTable('events')
      .set((eb) => ({
        delivered_at: null,
        to_callback: true,
        schedule_from: eb.ref('attempts'),
        next_attempt_at: now,
      }))
      .where('id', '=', eventId)
      .execute();
    await wakeEventDelivery(trx);
    await recordMemberAction(trx, now, { companyId, by, name: 'event-resent', detail: eventId });
    return 'resent';
  });
}

async function restartSchedules(
  trx: Pick<CloudContext['db'], 'updateTable'>,
  companyIds: number[],
  now: Date,
): Promise<number> {
  const result = await trx
    .updateTable('events')
    .set((eb) => ({ schedule_from: eb.ref('attempts'), next_attempt_at: now }))
    .where('company_id', 'in', companyIds)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How long events and their log are kept (docs/design.md section 6). */
export const KEEP_EVENTS_MS = 30 * 24 * 3600_000;

/**
 * Outbox hygiene: events, delivered or not, and the delivery log go 30 days after they were made; events of a
 * company without a callback address go once the retry window (`heldMs`) has passed, since nothing would ever
 * send them.
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
    .where((eb) =>
      eb(
        'company_id',
        'in',
        eb.selectFrom('companies').select('companies.id').where('callback_url', 'is', null),
      ),
    )
    .executeTakeFirst();
  const log = await ctx.db.deleteFrom('event_deliveries').where('at', '<', old).executeTakeFirst();
  return {
    events: Number(events.numDeletedRows),
    unaddressed: Number(unaddressed.numDeletedRows),
    log: Number(log.numDeletedRows),
  };
}
