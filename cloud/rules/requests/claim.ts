import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { requestClaimed } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { type AccessRequest, effectiveState, lockRequest, requestIdByCode } from './requests.js';

/**
 * The customer's moves on a request (docs/design.md sections 3 and 10.3): claim, release, decline,
 * grant (issue a key) and withdraw (revoke). Each is one transaction together with its event, so a
 * company never hears of a change that was not committed.
 *
 * Releasing is in ./release.ts, declining in ./decline.ts; granting and withdrawing, which make and end an
 * access key, are in cloud/rules/access-keys/access-keys.ts.
 */

/** The customer opened the request in the application: `new` becomes `claimed`. */
export async function claimRequest(
  ctx: CloudContext,
  input: { code: string; customerId: number },
): Promise<AccessRequest> {
  const id = await requestIdByCode(ctx, input.code);
  return ctx.db.transaction().execute(async (trx) => {
    const request = await lockRequest(trx, id);
    const now = ctx.clock.now();
    const state = effectiveState(request, now);
    if (state === 'expired') throw new ApiError('invalid_state', { message: 'The request has expired.' });
    if (state === 'declined') throw new ApiError('invalid_state', { message: 'The request was declined.' });
    if (state !== 'new') {
      if (request.customer_id !== input.customerId) {
        throw new ApiError('invalid_state', { message: 'The request was claimed by another customer.' });
      }
      return request;
    }
    const claimed = await trx
      .updateTable('requests')
      .set({ state: 'claimed', claimed_at: now, customer_id: input.customerId, handed_by: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueueEvent(trx, {
      companyId: claimed.company_id,
      type: 'request.claimed',
      at: now,
      data: requestClaimed(claimed, now),
    });
    return claimed;
  });
}
