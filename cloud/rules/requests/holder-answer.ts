import type { Transaction, Updateable } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DB, RequestsTable } from '../../foundation/db/schema.js';
import type { EventData, EventType } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { type AccessRequest, effectiveState, lockRequest, requestIdByCode } from './requests.js';

/**
 * What the customer holding a claim answers besides granting (docs/design.md sections 3 and 10.3): decline
 * (./decline.ts) or release (./release.ts), each with the event that tells the company. Only the holder answers, and only a `claimed` request; the change and
 * its event are one transaction, so a company never hears of a change that was not committed.
 */
export async function answerAsHolder<T extends EventType>(
  ctx: CloudContext,
  input: { code: string; customerId: number },
  answer: {
    /** "decline", "release": said when someone else, or another state, is refused. */
    verb: string;
    change(now: Date): Updateable<RequestsTable>;
    event: T;
    data(request: AccessRequest, now: Date): EventData[T];
  },
): Promise<AccessRequest> {
  const id = await requestIdByCode(ctx, input.code);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    await lockHeldClaim(trx, { id, customerId: input.customerId, now, verb: answer.verb });
    const answered = await trx
      .updateTable('requests')
      .set(answer.change(now))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueueEvent(trx, {
      companyId: answered.company_id,
      type: answer.event,
      at: now,
      data: answer.data(answered, now),
    });
    return answered;
  });
}

/**
 * Locks the request for the rest of the transaction and checks that it is `claimed` by this customer: what
 * every answer of the holder's (decline, release, passing it on in ./handover.ts) stands on.
 */
export async function lockHeldClaim(
  trx: Transaction<DB>,
  input: { id: number; customerId: number; now: Date; verb: string },
): Promise<AccessRequest> {
  const request = await lockRequest(trx, input.id);
  const state = effectiveState(request, input.now);
  if (state !== 'claimed' || request.customer_id !== input.customerId) {
    throw new ApiError('invalid_state', {
      message: `Only the customer who claimed a request can ${input.verb} it; this one is ${state}.`,
    });
  }
  return request;
}
