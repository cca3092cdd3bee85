import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { requestDeclined } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { type AccessRequest, effectiveState, lockRequest, requestIdByCode } from './requests.js';

/**
 * The customer who claimed a request says no (docs/design.md sections 3 and 10.3): `claimed` becomes `declined`
 * at once, in one transaction with its `request.declined` event, so the company stops waiting. The event and
 * `status` say only that and when: nothing of the customer or their barriers. A declined request is final: it
 * is neither claimed, granted nor expired afterwards (effectiveState, claimRequest, issueAccessKey and the
 * expiry sweep all take only `new` or `claimed`).
 */
export async function declineRequest(
  ctx: CloudContext,
  input: { code: string; customerId: number },
): Promise<AccessRequest> {
  const id = await requestIdByCode(ctx, input.code);
  return ctx.db.transaction().execute(async (trx) => {
    const request = await lockRequest(trx, id);
    const now = ctx.clock.now();
    const state = effectiveState(request, now);
    if (state !== 'claimed' || request.customer_id !== input.customerId) {
      throw new ApiError('invalid_state', {
        message: `Only the customer who claimed a request can decline it; this one is ${state}.`,
      });
    }
    const declined = await trx
      .updateTable('requests')
      .set({ state: 'declined', declined_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueueEvent(trx, {
      companyId: declined.company_id,
      type: 'request.declined',
      at: now,
      data: requestDeclined(declined, now),
    });
    return declined;
  });
}
