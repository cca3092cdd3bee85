import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { type Companion, companionOf } from '../households/companions.js';
import { lockHeldClaim } from './holder-answer.js';
import { requestIdByCode } from './requests.js';

/**
 * The customer holding a claim passes it to someone of their household (docs/design.md section 9.2): the
 * request stays `claimed` and keeps its expiry, now held by the companion, who answers it as if they had
 * pressed Continue themselves; `handed_by` keeps who passed it, for the new holder's page. The company hears
 * nothing: to it the request is claimed either way, and who in a household answers is not its business. Only
 * the holder passes it, and only to someone they share a barrier with who may grant on it; anyone else is
 * refused with nothing changed.
 */
export async function handOverRequest(
  ctx: CloudContext,
  input: { code: string; customerId: number; toCustomerId: number },
): Promise<Companion> {
  const id = await requestIdByCode(ctx, input.code);
  return ctx.db.transaction().execute(async (trx) => {
    await lockHeldClaim(trx, { id, customerId: input.customerId, now: ctx.clock.now(), verb: 'pass on' });
    const companion = await companionOf(trx, input.customerId, input.toCustomerId);
    if (!companion) {
      throw new ApiError('invalid_field', {
        field: 'to',
        message: 'Choose someone who shares one of your barriers and may grant on it.',
      });
    }
    await trx
      .updateTable('requests')
      .set({ customer_id: companion.customerId, handed_by: input.customerId })
      .where('id', '=', id)
      .execute();
    return companion;
  });
}
