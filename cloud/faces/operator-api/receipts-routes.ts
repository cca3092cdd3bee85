import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { validate } from '../../foundation/http/validation.js';
import { checkDeviceChains } from '../../rules/receipts/chain-check.js';
import { deviceParams } from './device-lifecycle-routes.js';

/**
 * The operator's check of a barrier's receipts (docs/design.md section 5.3), behind the operator bearer of
 * `opsRoutes`: every chain of the controller checked in full now, each verdict recorded where the customer's
 * barrier page reads it, and answered.
 */
export async function receiptsRoutes(app: FastifyInstance, ctx: CloudContext): Promise<void> {
  app.post('/ops/devices/:id/receipts/check', async (request) => {
    const { id } = validate(deviceParams, request.params);
    const device = await ctx.db.selectFrom('devices').select('id').where('id', '=', id).executeTakeFirst();
    if (!device) throw new ApiError('not_found', { message: `No controller ${id}: device list shows them.` });
    const checked = await checkDeviceChains(ctx, id);
    return {
      device_id: id,
      chains: checked.map(({ customerId, verdict }) =>
        verdict.intact
          ? { customer_id: customerId, intact: true, entries: verdict.head.seq }
          : {
              customer_id: customerId,
              intact: false,
              broken_seq: verdict.seq,
              broken_entry: verdict.entry,
              reason: verdict.reason,
            },
      ),
    };
  });
}
