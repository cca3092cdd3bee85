import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { openBodySchema } from '../../../shared/company-api/calls.js';
import { ApiError } from '../../../shared/errors.js';
import { CALL_TAP_SECONDS, OPEN_ANSWER_LIMIT_MS } from '../../../shared/limits.js';
import type { Command } from '../../../shared/protocol/messages.js';
import type { CloudContext } from '../../foundation/context.js';
import { type ResultColumns, readRow, type TableResult } from '../../foundation/db/function-result.js';
import type { JournalOutcome } from '../../foundation/db/schema.js';
import { validate } from '../../foundation/http/validation.js';
import type { Caller } from '../call-auth/authenticate.js';
import type { StoredAnswer } from '../idempotency/idempotency.js';
import { ackOutcome, completeEntry } from '../journal/journal.js';
import { askHousehold, askToCall } from '../opening-questions/asking.js';
import { QuestionWaits } from '../opening-questions/question-waits.js';
import type { CommandDispatcher } from './dispatcher.js';
import { ObjectRoutes } from './object-routes.js';
import { OpeningQueue } from './opening-queue.js';

/** The rate limit's rolling window; attempts that reached, or tried to reach, the gate count against it. */
const RATE_WINDOW_MS = 60_000;

/** Less time than this left of an `open` and the household is not asked to call the gate: nobody could. */
const CALL_TAP_LEAST_MS = 15_000;
/** What an `open` keeps of its longest time for its answer to leave after the tap: the proxies wait no longer. */
const ACK_MARGIN_MS = 2_000;

/** `actor` is checked first: a call that does not name the employee is refused whatever else it holds. */
export function readOpenBody(body: Record<string, unknown>) {
  const actor = body.actor;
  if (actor === undefined || actor === null || (typeof actor === 'string' && actor.trim() === '')) {
    throw new ApiError('actor_required');
  }
  return validate(openBodySchema, body);
}

/** An attempt that passed the checks: its journal entry, and the command to send. */
interface Dispatch {
  journalId: number;
  commandId: string;
  deviceId: string;
  object: string;
  numberId: number;
  /** Until when the barrier's household may answer the question this attempt asks; null: it asks none. */
  askUntil: Date | null;
}

/**
 * What open_attempt returns: its `returns table` in open-attempt.sql, declared here once; the row type follows
 * from it, each row is checked against it, and a test compares it with the database's catalog.
 */
export const openAttemptResult = {
  function: 'open_attempt',
  table: {
    entry_id: 'integer',
    refusal: 'text',
    retry_after_s: 'integer',
    to_device: 'text',
    to_object: 'text',
    ask_until: 'timestamp with time zone',
  },
} as const satisfies TableResult<ResultColumns>;

/** The refusals open_attempt gives, each the code of its answer (shared/errors.ts). */
const REFUSALS = [
  'org_not_approved',
  'revoked',
  'expired',
  'not_started',
  'outside_hours',
  'openings_used',
  'forbidden',
  'rate_limit',
] as const;
type Refusal = (typeof REFUSALS)[number];

function asRefusal(value: string): Refusal {
  const refusal = REFUSALS.find((known) => known === value);
  if (!refusal) throw new Error(`open_attempt gave an unknown refusal: ${value}`);
  return refusal;
}

/**
 * The checks of cloud/README.md, "Opening", in order, and the journal entry, in one call of the database's
 * `open_attempt` (cloud/rules/opening/open-attempt.sql, which says why it is one function and how it counts), which
 * locks the key row so that the rate limit counts correctly across concurrent calls and cloud instances. A
 * refusal is thrown, once journalled.
 */
async function decide(
  ctx: CloudContext,
  caller: Caller,
  body: { key_ref: number; number_id: number; actor: string },
  commandId: string,
): Promise<Dispatch> {
  const { rows } = await sql<Record<string, unknown>>`
    select * from open_attempt(${caller.company.id}::integer, ${body.key_ref}::integer,
      ${body.number_id}::integer, ${body.actor}::text, ${ctx.clock.now()}::timestamptz,
      ${ctx.config.openRateLimit}::integer, ${RATE_WINDOW_MS}::integer, ${commandId}::uuid,
      ${randomUUID()}::uuid)
  `.execute(ctx.db);
  // Another company's key is answered like a missing one, and leaves no trace in that customer's journal.
  if (!rows[0]) throw new ApiError('forbidden');
  const attempt = readRow(openAttemptResult, rows[0]);
  if (attempt.refusal) throw refusalError(asRefusal(attempt.refusal), attempt.retry_after_s);
  return {
    journalId: attempt.entry_id!,
    commandId,
    deviceId: attempt.to_device!,
    object: attempt.to_object!,
    numberId: body.number_id,
    askUntil: attempt.ask_until,
  };
}

function refusalError(refusal: Refusal, retryAfterS: number | null): ApiError {
  if (refusal !== 'rate_limit') return new ApiError(refusal);
  return new ApiError('rate_limit', { headers: { 'retry-after': String(retryAfterS ?? 1) } });
}

export type OpenBody = ReturnType<typeof readOpenBody>;

/** One `open` under way: its command id, its log, its place in the foreground and in the opening queue. */
interface OpeningCall {
  commandId: string;
  log: FastifyBaseLogger;
  foreground: { done: () => void };
  leaveQueue: () => void;
}

/**
 * `a=open`: checks, journal entry, the signed command to the controller, and the answer only once the
 * controller acknowledged. Every outcome, refusals included, lands in the journal. One per cloud instance: it
 * remembers where each object's commands go (object-routes.ts).
 */
export class Opener {
  readonly #ctx: CloudContext;
  readonly #dispatcher: CommandDispatcher;
  readonly #routes: ObjectRoutes;
  readonly #questions: QuestionWaits;
  readonly #queue: OpeningQueue;
  /** Per company, the journal write of its latest opening answered before it was written. */
  readonly #unwritten = new Map<number, Promise<void>>();

  /** `questions`: the instance's waits for answers (section 10.8); one of its own, polling, when not given. */
  constructor(
    ctx: CloudContext,
    dispatcher: CommandDispatcher,
    routes = new ObjectRoutes(),
    questions = new QuestionWaits(ctx.db, ctx.clock),
  ) {
    this.#ctx = ctx;
    this.#dispatcher = dispatcher;
    this.#routes = routes;
    this.#questions = questions;
    this.#queue = new OpeningQueue(ctx.config.openQueueLimit);
  }

  /**
   * A place for the company's opening among those under way (opening-queue.ts); throws
   * `overloaded` when there is none. Taken before anything is written, an Idempotency-Key's claim included.
   */
  enter(companyId: number): () => void {
    return this.#queue.enter(companyId);
  }

  /** Openings under way now, a person's answer aside (a gauge of cloud/foundation/metrics). */
  get queued(): number {
    return this.#queue.waiting;
  }

  /** `a=open` on the caller's body; `log` is the call's own (its lines carry the request id). */
  open(caller: Caller, log?: FastifyBaseLogger): Promise<StoredAnswer> {
    return this.openWith(caller, readOpenBody(caller.body), randomUUID(), log);
  }

  /**
   * `a=open` with a body already read by `readOpenBody`. `commandId` is given when the caller recorded it
   * first (an `Idempotency-Key` claim, so that a claim left by a dead instance can be settled).
   */
  async openWith(
    caller: Caller,
    body: OpenBody,
    commandId: string = randomUUID(),
    log: FastifyBaseLogger = this.#ctx.log,
    place: () => void = this.enter(caller.company.id),
  ): Promise<StoredAnswer> {
    const foreground = { done: this.#ctx.foreground.begin() };
    try {
      return await this.#openUnderWay(caller, body, { commandId, log, foreground, leaveQueue: place });
    } finally {
      place();
      foreground.done();
    }
  }

  async #openUnderWay(caller: Caller, body: OpenBody, call: OpeningCall): Promise<StoredAnswer> {
    const { commandId, log, foreground } = call;
    const ctx = this.#ctx;
    const started = ctx.clock.now();
    await this.#unwritten.get(caller.company.id);
    const [decision, early] = await Promise.all([
      decide(ctx, caller, body, commandId),
      this.#signMeanwhile(commandId, body.number_id),
    ]);
    this.#routes.remember(decision.numberId, { deviceId: decision.deviceId, object: decision.object });
    let command =
      early?.device_id === decision.deviceId && early.object === decision.object
        ? early
        : this.#dispatcher.sign(decision);
    if (decision.askUntil) {
      // Nobody stands at the gate for the cloud while the customer decides: background work may go meanwhile,
      // and the opening gives up its place in the queue.
      call.leaveQueue();
      foreground.done();
      await this.#ask(decision, decision.askUntil, log);
      foreground.done = ctx.foreground.begin();
      // Signed again: a command carries its time, and the one signed before the question is a minute old.
      command = this.#dispatcher.sign(decision);
    }
    const result = await this.#dispatcher.send(command);
    // An ack's outcome is the ack handler's to write in the journal (cloud/links/controllers/handlers/ack.ts).
    if (result.kind === 'acked') {
      this.#holdUntilWritten(caller.company.id, this.#dispatcher.journalWritten?.(command.id));
      const { outcome, detail } = ackOutcome(result.ack);
      logOpening(log, decision, outcome);
      if (outcome === 'opened') return openedAnswer(decision.journalId);
      throw deviceError(detail);
    }
    if (result.kind === 'offline' && (await this.#askToCall(decision, started, call))) {
      logOpening(log, decision, 'opened');
      return openedAnswer(decision.journalId);
    }
    const outcome: JournalOutcome = result.kind === 'offline' ? 'device_offline' : 'device_timeout';
    logOpening(log, decision, outcome);
    // An ack that beat this verdict to the entry wins: completeEntry takes only an entry with no outcome.
    await completeEntry(
      ctx.db,
      { id: decision.journalId },
      { outcome, detail: null, ackedAt: null, now: ctx.clock.now() },
    );
    throw new ApiError(outcome);
  }

  /**
   * Asks the barrier's household and waits for the first answer (docs/design.md section 10.8). Returns when it
   * is Allow; a Deny, or no answer in time, completes the entry with that outcome (its event to the company
   * included) and is the call's answer.
   */
  async #ask(decision: Dispatch, askUntil: Date, log: FastifyBaseLogger): Promise<void> {
    const ctx = this.#ctx;
    await askHousehold(ctx.db, { journalId: decision.journalId, now: ctx.clock.now() });
    const settled = await this.#questions.wait(decision.journalId, askUntil);
    if (settled.answer === 'allowed') return;
    const outcome = settled.answer === 'denied' ? 'denied' : 'not_answered';
    logOpening(log, decision, outcome);
    // Who answered stays with the household (opening_questions, shown in its journal): the company is told the
    // outcome only, as it is of every refusal.
    await completeEntry(
      ctx.db,
      { id: decision.journalId },
      { outcome, detail: null, ackedAt: null, now: ctx.clock.now() },
    );
    throw new ApiError(outcome);
  }

  /**
   * The controller of a gate that the customer's phone calls is offline (docs/design.md section 10.9): when the
   * household can be asked, the call waits, out of the foreground, for someone to tap "Call the gate", which
   * dials the gate from their phone. A tap completes the entry `opened`, with its `open.succeeded` event, and
   * is the call's answer; no tap in time, or nobody to ask, leaves the caller's `device_offline` as it was.
   */
  async #askToCall(decision: Dispatch, started: Date, call: OpeningCall): Promise<boolean> {
    const { foreground } = call;
    const ctx = this.#ctx;
    const now = ctx.clock.now();
    const until = Math.min(
      now.getTime() + CALL_TAP_SECONDS * 1000,
      started.getTime() + OPEN_ANSWER_LIMIT_MS - ACK_MARGIN_MS,
    );
    if (until - now.getTime() < CALL_TAP_LEAST_MS) return false;
    const answerBy = new Date(until);
    if (!(await askToCall(ctx.db, { journalId: decision.journalId, now, answerBy }))) return false;
    call.leaveQueue();
    foreground.done();
    const settled = await this.#questions.wait(decision.journalId, answerBy);
    foreground.done = ctx.foreground.begin();
    if (settled.answer !== 'called') return false;
    await completeEntry(
      ctx.db,
      { id: decision.journalId },
      { outcome: 'opened', detail: null, ackedAt: null, now: ctx.clock.now() },
    );
    return true;
  }

  /**
   * The answer leaves before the ack's journal write (cloud/links/controllers/handlers/ack.ts). The company's next opening
   * waits for that write, so that its events come after this opening's (docs/design.md section 6): an event's
   * place is taken when it is written.
   */
  #holdUntilWritten(companyId: number, written: Promise<unknown> | undefined): void {
    if (!written) return;
    const settled = written.then(
      () => undefined,
      () => undefined,
    );
    this.#unwritten.set(companyId, settled);
    void settled.then(() => {
      if (this.#unwritten.get(companyId) === settled) this.#unwritten.delete(companyId);
    });
  }

  /**
   * The command for the object's known route, signed while the database checks the call and writes its entry:
   * on the next turn, once the query has left. Nothing when the route is not known yet.
   */
  async #signMeanwhile(commandId: string, numberId: number): Promise<Command | undefined> {
    const route = this.#routes.get(numberId);
    if (!route) return undefined;
    await nextTurn();
    return this.#dispatcher.sign({ commandId, numberId, ...route });
  }
}

/**
 * The line that ties an opening together (docs/design.md section 8.1): the call's request id (in `log`), its
 * journal entry, and the command id the controller logs and acknowledges, so one id leads from the company's
 * X-Request-Id to the controller's log and back.
 */
function logOpening(log: FastifyBaseLogger, decision: Dispatch, outcome: JournalOutcome): void {
  log.info(
    { journalId: decision.journalId, commandId: decision.commandId, deviceId: decision.deviceId, outcome },
    'opening answered by the controller link',
  );
}

function openedAnswer(journalId: number): StoredAnswer {
  return { status: 200, body: { ok: 1, id: journalId } };
}

function deviceError(detail: string | null): ApiError {
  return new ApiError('device_error', {
    detail: detail ?? 'failed',
    message: `The controller reported a failure: ${detail ?? 'unknown'}.`,
  });
}

/**
 * The answer an opening whose journal entry has settled on `outcome` gets: the same as the caller would have
 * been given, for a claim whose own instance died before answering (cloud/rules/opening/unanswered.ts).
 */
export function settledAnswer(entry: {
  id: number;
  outcome: JournalOutcome;
  detail: string | null;
}): StoredAnswer {
  if (entry.outcome === 'opened') return openedAnswer(entry.id);
  const error = entry.outcome === 'device_error' ? deviceError(entry.detail) : new ApiError(entry.outcome);
  return { status: error.status, body: { ...error.toBody() } };
}
