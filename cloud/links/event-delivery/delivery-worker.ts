import { performance } from 'node:perf_hooks';
import type { Part } from '../../../shared/lifecycle/lifecycle.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DatabaseHandle } from '../../foundation/db/database.js';
import { databaseOutage } from '../../foundation/db/database-outage.js';
import {
  type Attempt,
  type ClaimedEndpoint,
  claimEndpoints,
  type DueEvent,
  dueEvents,
  recordTurn,
} from '../../rules/events/delivery-store.js';
import { EVENTS_WAKE_CHANNEL, NO_CALLBACK_WAKE } from '../../rules/events/events-wake.js';
import { FAILURE_PAUSE_MS, retryDelay } from '../../rules/events/retry-schedule.js';
import { signingKeys } from '../../rules/events/signing-secrets.js';
import { webhookBody, webhookHeaders } from '../../rules/events/webhook-message.js';
import { type CallbackConnection, postEvent } from './callback-post.js';

/**
 * Delivers the outbox to the companies' endpoints, their callback addresses (docs/design.md sections 6 and 6.2).
 *
 * A worker takes an endpoint's due events for a while (a lease, delivery-store.ts `claimEndpoints`), sends them
 * one after another in the order they were written, stops at the first failure, writes what happened and gives
 * the endpoint back. So one endpoint's events are never sent by two workers at once, an event never goes before
 * an earlier one was delivered to that endpoint or failed its first attempt there, and a slow or hostile
 * receiver holds one of the worker's places at a time, never more: at most `concurrency` endpoints are served at
 * once, and a company's other endpoints are served beside it.
 *
 * The lease outlasts the turn: no attempt starts later than `turnMs` after the claim and each ends by
 * `timeoutMs`, and `LEASE_MARGIN_MS` covers writing the results. A worker that dies leaves its endpoints to the
 * others once their leases end; what it sent and had not written yet is sent again (at least once).
 */

export interface DeliveryOptions extends CallbackConnection {
  /** Endpoints served at once. */
  concurrency: number;
  /** Events sent in one turn with an endpoint. */
  batchSize: number;
  /** No attempt starts later than this after the endpoint was claimed. */
  turnMs: number;
  /** The running worker looks for due retries this often, besides being woken by new events. */
  pollMs: number;
  /** Jitter of the retry schedule, in [0, 1); Math.random by default. */
  random?: () => number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  allowPrivateAddresses: false,
  timeoutMs: 10_000,
  concurrency: 32,
  batchSize: 100,
  turnMs: 5_000,
  pollMs: 1_000,
};

/** Covers writing a turn's results after its last attempt ended. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Claims woken by commits are at least this far apart: a busy cloud writes events with most of its openings, and
 * one claim per 20 ms serves them all, where one per commit would compete with the openings for the database (on
 * PGlite for its one connection). An idle worker's first wake is not delayed.
 */
const WAKE_GAP_MS = 20;

export function leaseMs(options: DeliveryOptions): number {
  return options.turnMs + options.timeoutMs + LEASE_MARGIN_MS;
}

export interface DeliveryTally {
  delivered: number;
  failed: number;
}

/**
 * Sends what is due now and returns once nothing more is: endpoints are claimed and served, `concurrency` at a
 * time, until no endpoint has anything due. What tests call to deliver at a moment they choose; an endpoint that
 * failed is paused, so this ends however it answers.
 */
export async function deliverDue(
  ctx: CloudContext,
  options: Partial<DeliveryOptions> = {},
): Promise<DeliveryTally> {
  const settings = { ...DEFAULT_DELIVERY, ...options };
  const tally: DeliveryTally = { delivered: 0, failed: 0 };
  for (;;) {
    const endpoints = await claimEndpoints(ctx, { limit: settings.concurrency, leaseMs: leaseMs(settings) });
    if (endpoints.length === 0) return tally;
    const turns = await Promise.all(endpoints.map((endpoint) => serveEndpoint(ctx, endpoint, settings)));
    for (const turn of turns) {
      tally.delivered += turn.delivered;
      tally.failed += turn.failed;
    }
  }
}

/**
 * One turn with an endpoint: its due events in order until the first failure, the turn's time or `stop`; then
 * the results are written and the endpoint given back. An attempt cut short by `stop` is not counted: the event
 * is sent again later.
 */
async function serveEndpoint(
  ctx: CloudContext,
  endpoint: ClaimedEndpoint,
  options: DeliveryOptions,
  stop?: AbortSignal,
): Promise<DeliveryTally> {
  const started = performance.now();
  const attempts: Attempt[] = [];
  try {
    const events = await dueEvents(ctx, endpoint.endpointId, options.batchSize);
    // Read once a turn: a secret rotated or expired during a turn signs, or stops signing, from the next one.
    const keys = events.length > 0 ? await signingKeys(ctx.db, endpoint.endpointId, ctx.clock.now()) : [];
    for (const event of events) {
      if (stop?.aborted || performance.now() - started > options.turnMs) break;
      const attempt = await attemptDelivery(ctx, endpoint, event, keys, options, stop);
      if (stop?.aborted) break;
      attempts.push(attempt);
      if (attempt.error !== null) break;
    }
  } finally {
    await recordTurn(ctx, { endpoint, attempts, pauseMs: FAILURE_PAUSE_MS });
  }
  const failed = attempts.filter((attempt) => attempt.error !== null).length;
  return { delivered: attempts.length - failed, failed };
}

async function attemptDelivery(
  ctx: CloudContext,
  endpoint: ClaimedEndpoint,
  event: DueEvent,
  keys: readonly Uint8Array[],
  options: DeliveryOptions,
  stop?: AbortSignal,
): Promise<Attempt> {
  const at = ctx.clock.now();
  const body = webhookBody(event, endpoint.sandbox);
  const headers = webhookHeaders(
    ctx.serviceKey,
    { id: event.id, timestamp: Math.floor(at.getTime() / 1000), body },
    keys,
  );
  const began = performance.now();
  const result = await postEvent(endpoint.url, { headers, body }, options, stop);
  const durationMs = performance.now() - began;
  let nextAttemptAt: Date | null = null;
  if (result.error !== null) {
    const delay = retryDelay(event.attempts - event.schedule_from + 1, options.random);
    if (delay !== null) nextAttemptAt = new Date(ctx.clock.now().getTime() + delay);
  }
  return {
    event,
    at,
    durationMs,
    status: result.status,
    error: result.error,
    nextAttemptAt,
    sent: result.sent,
    answer: result.answer,
  };
}

/**
 * The running worker, a component of the cloud (cloud/cloud.ts). It is woken at once by every commit that
 * wrote an event (a notification sent by a trigger on `events`, migration 0007), looks every `pollMs` for retries
 * that came due, and serves up to `concurrency` endpoints at once. `stop()` cuts the attempts in flight short,
 * writes what was done and gives the endpoints back, so that a restart goes on at once.
 */
export class EventDelivery implements Part {
  readonly name = 'event delivery';
  readonly #ctx: CloudContext;
  readonly #database: DatabaseHandle;
  readonly #options: DeliveryOptions;
  readonly #turns = new Set<Promise<unknown>>();
  readonly #stop = new AbortController();
  #unlisten: (() => Promise<void>) | null = null;
  #poll: NodeJS.Timeout | null = null;
  #claiming: Promise<void> | null = null;
  #again = false;
  #lastClaim = Number.NEGATIVE_INFINITY;
  #nudge: NodeJS.Timeout | null = null;

  constructor(options: { ctx: CloudContext; database: DatabaseHandle; delivery: DeliveryOptions }) {
    this.#ctx = options.ctx;
    this.#database = options.database;
    this.#options = options.delivery;
  }

  async start(): Promise<void> {
    if (this.#database.listen) {
      // Events for no endpoint (events-notify.sql) leave the claim asleep.
      this.#unlisten = await this.#database.listen(EVENTS_WAKE_CHANNEL, (payload) => {
        if (payload !== NO_CALLBACK_WAKE) this.#notified();
      });
    }
    this.#poll = setInterval(() => this.wake(), this.#options.pollMs);
    this.#poll.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    if (this.#poll) clearInterval(this.#poll);
    if (this.#nudge) clearTimeout(this.#nudge);
    await this.#unlisten?.().catch(() => {});
    await this.#claiming;
    await Promise.allSettled([...this.#turns]);
  }

  /** A commit wrote events: looks now, or `WAKE_GAP_MS` after the last look. */
  #notified(): void {
    const wait = this.#lastClaim + WAKE_GAP_MS - performance.now();
    if (wait <= 0) {
      this.wake();
      return;
    }
    this.#nudge ??= setTimeout(() => {
      this.#nudge = null;
      this.wake();
    }, wait);
  }

  /** Looks for due endpoints now, or right after the look in progress. */
  wake(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claimWhileFree().finally(() => {
      this.#claiming = null;
    });
  }

  async #claimWhileFree(): Promise<void> {
    do {
      this.#again = false;
      const free = this.#options.concurrency - this.#turns.size;
      if (free <= 0 || this.#stop.signal.aborted) return;
      let endpoints: ClaimedEndpoint[];
      this.#lastClaim = performance.now();
      try {
        endpoints = await claimEndpoints(this.#ctx, { limit: free, leaseMs: leaseMs(this.#options) });
        databaseOutage(this.#ctx).answered();
      } catch (error) {
        // The database out of reach is counted once per outage, not logged at every wake-up.
        if (databaseOutage(this.#ctx).failed(error, 'event delivery')) return;
        this.#ctx.log.error({ err: error }, 'event delivery could not claim endpoints; it tries again');
        return;
      }
      for (const endpoint of endpoints) this.#serve(endpoint);
      // All places taken by this claim: there may be more waiting, looked for when a place frees up.
      if (endpoints.length === free) return;
    } while (this.#again);
  }

  #serve(endpoint: ClaimedEndpoint): void {
    const turn = serveEndpoint(this.#ctx, endpoint, this.#options, this.#stop.signal)
      .catch((error: unknown) => {
        this.#ctx.log.error(
          { err: error, company: endpoint.companyId, endpoint: endpoint.endpointId },
          'event delivery failed a turn; its events are sent again once its lease ends',
        );
      })
      .finally(() => {
        this.#turns.delete(turn);
        this.wake();
      });
    this.#turns.add(turn);
  }
}
