import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import type { Caller } from '../auth/authenticate.js';
import type { StoredAnswer } from '../company-api/idempotency.js';
import type { CloudContext } from '../context.js';
import type { DB, JournalOutcome } from '../db/schema.js';
import { enqueueEvent } from '../events/outbox.js';
import { MAX_ID, validate } from '../http/validation.js';
import { ackOutcome, completeEntry } from '../journal/journal.js';
import type { CommandDispatcher } from './dispatcher.js';

const RATE_WINDOW_MS = 60_000;
/** Outcomes that count against the per-key rate limit: attempts that reached (or tried to reach) the gate. */
const COUNTED: JournalOutcome[] = ['opened', 'device_offline', 'device_timeout', 'device_error'];

/**
 * No control characters, and no text-direction overrides either: they could make a name in the customer's
 * journal read as something else (U+202E turns "Bob" into what looks like another text).
 */
const NO_CONTROLS = /^[^\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/u;

export const openBodySchema = z.looseObject({
  key_ref: z
    .number({ error: 'key_ref must be an integer' })
    .int('key_ref must be an integer')
    .positive()
    .max(MAX_ID, 'key_ref is out of range'),
  number_id: z
    .number({ error: 'number_id must be an integer' })
    .int('number_id must be an integer')
    .positive()
    .max(MAX_ID, 'number_id is out of range'),
  actor: z
    .string()
    .transform((value) => value.trim())
    .pipe(
      z
        .string()
        .max(128, 'actor must be at most 128 characters')
        .regex(NO_CONTROLS, 'actor must not contain control or text-direction characters'),
    ),
});

/** `actor` is checked first: a call that does not name the employee is refused whatever else it holds. */
export function readOpenBody(body: Record<string, unknown>) {
  const actor = body.actor;
  if (actor === undefined || actor === null || (typeof actor === 'string' && actor.trim() === '')) {
    throw new ApiError('actor_required');
  }
  return validate(openBodySchema, body);
}

type Decision =
  | { kind: 'refused'; error: ApiError; journalId: number }
  | {
      kind: 'dispatch';
      journalId: number;
      commandId: string;
      deviceId: string;
      object: string;
      numberId: number;
    };

/**
 * The checks of decisions.md section 4, in order, and the journal entry, in one transaction. The key row
 * is locked so that the rate limit counts correctly across concurrent calls and cloud instances.
 */
async function decide(
  ctx: CloudContext,
  caller: Caller,
  body: { key_ref: number; number_id: number; actor: string },
): Promise<Decision> {
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    // The key, its request and the object asked for, in one query; only the key row is locked.
    const key = await trx
      .selectFrom('keys')
      .innerJoin('requests', 'requests.id', 'keys.request_id')
      .leftJoin('key_objects', (join) =>
        join.onRef('key_objects.key_id', '=', 'keys.id').on('key_objects.object_id', '=', body.number_id),
      )
      .leftJoin('device_objects', (join) =>
        join
          .onRef('device_objects.id', '=', 'key_objects.object_id')
          .on('device_objects.removed_at', 'is', null),
      )
      .select([
        'keys.id',
        'keys.company_id',
        'keys.device_id',
        'keys.revoked_at',
        'keys.expires_at',
        'requests.code',
        'requests.ref',
        'device_objects.id as object_id',
        'device_objects.local_id as object_local_id',
      ])
      .where('keys.id', '=', body.key_ref)
      .modifyEnd(sql`for update of keys`)
      .executeTakeFirst();
    // Another company's key is answered like a missing one, and leaves no trace in that customer's journal.
    if (!key || key.company_id !== caller.company.id) throw new ApiError('forbidden');

    let refusal: ApiError | null = null;
    if (key.revoked_at) refusal = new ApiError('revoked');
    else if (key.expires_at && key.expires_at <= now) refusal = new ApiError('expired');
    else if (key.object_id === null) refusal = new ApiError('forbidden');
    else refusal = await rateLimitRefusal(trx, key.id, now, ctx.config.openRateLimit);

    const commandId = randomUUID();
    const outcome = refusal ? (refusal.code as JournalOutcome) : null;
    const entry = await trx
      .insertInto('journal')
      .values({
        at: now,
        device_id: key.device_id,
        object_id: key.object_id,
        company_id: caller.company.id,
        key_id: key.id,
        actor: body.actor,
        outcome,
        command_id: refusal ? null : commandId,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (refusal) {
      await enqueueEvent(trx, {
        companyId: caller.company.id,
        type: 'open.failed',
        at: now,
        data: {
          code: key.code,
          ref: key.ref,
          key_ref: key.id,
          number_id: key.object_id,
          actor: body.actor,
          journal_id: entry.id,
          outcome,
        },
      });
      return { kind: 'refused', error: refusal, journalId: entry.id };
    }
    return {
      kind: 'dispatch',
      journalId: entry.id,
      commandId,
      deviceId: key.device_id,
      object: key.object_local_id!,
      numberId: key.object_id!,
    };
  });
}

async function rateLimitRefusal(
  trx: Transaction<DB>,
  keyId: number,
  now: Date,
  limit: number,
): Promise<ApiError | null> {
  const since = new Date(now.getTime() - RATE_WINDOW_MS);
  const counted = await trx
    .selectFrom('journal')
    .select([sql<number>`count(*)::int`.as('count'), sql<Date | null>`min(at)`.as('oldest')])
    .where('key_id', '=', keyId)
    .where('at', '>', since)
    .where((eb) => eb.or([eb('outcome', 'is', null), eb('outcome', 'in', COUNTED)]))
    .executeTakeFirstOrThrow();
  if (counted.count < limit) return null;
  const oldest = counted.oldest ? new Date(counted.oldest) : now;
  const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + RATE_WINDOW_MS - now.getTime()) / 1000));
  return new ApiError('rate_limit', { headers: { 'retry-after': String(retryAfter) } });
}

/**
 * `a=open`: checks, journal entry, the signed command to the controller, and the answer only once the
 * controller acknowledged. Every outcome, refusals included, lands in the journal.
 */
export async function handleOpen(
  ctx: CloudContext,
  dispatcher: CommandDispatcher,
  caller: Caller,
): Promise<StoredAnswer> {
  return openWith(ctx, dispatcher, caller, readOpenBody(caller.body));
}

export type OpenBody = ReturnType<typeof readOpenBody>;

/** `a=open` with a body already read by `readOpenBody`. */
export async function openWith(
  ctx: CloudContext,
  dispatcher: CommandDispatcher,
  caller: Caller,
  body: OpenBody,
): Promise<StoredAnswer> {
  const decision = await decide(ctx, caller, body);
  if (decision.kind === 'refused') throw decision.error;
  const result = await dispatcher.dispatch({
    commandId: decision.commandId,
    deviceId: decision.deviceId,
    object: decision.object,
    numberId: decision.numberId,
  });
  const now = ctx.clock.now();
  if (result.kind === 'acked') {
    const { outcome, detail } = ackOutcome(result.ack);
    // Normally the ack was recorded as it arrived; if that failed, this call records it.
    if (!result.recorded) {
      await completeEntry(
        ctx.db,
        { id: decision.journalId },
        { outcome, detail, ackedAt: new Date(result.ack.finished_at), now },
      );
    }
    if (outcome === 'opened') return { status: 200, body: { ok: 1, id: decision.journalId } };
    throw new ApiError('device_error', { detail: detail ?? 'failed', message: deviceErrorMessage(detail) });
  }
  const outcome: JournalOutcome = result.kind === 'offline' ? 'device_offline' : 'device_timeout';
  // An ack that beat this verdict to the entry wins: completeEntry takes only an entry with no outcome.
  await completeEntry(ctx.db, { id: decision.journalId }, { outcome, detail: null, ackedAt: null, now });
  throw new ApiError(outcome);
}

function deviceErrorMessage(detail: string | null): string {
  return `The controller reported a failure: ${detail ?? 'unknown'}.`;
}
