import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { isDeviceId } from '../../../shared/protocol/topics.js';
import { validate } from '../../foundation/http/validation.js';
import {
  type BrokerAccounts,
  replaceController,
  retireDevice,
} from '../../rules/devices/device-lifecycle.js';
import { pairingCodeFor } from '../../rules/devices/pairing-renewal.js';
import type { OperatorApiContext } from './operator-api-context.js';

/**
 * The operator's side of a controller's life (docs/design.md section 9.1), behind the operator bearer of
 * `opsRoutes`: issuing a pairing code, retiring a record, replacing a broken controller by a new one.
 */
export const deviceParams = z.object({
  id: z.string().refine(isDeviceId, { message: 'id is not a device id.' }),
});
const replaceBody = z.strictObject({
  new_device: z.string().refine(isDeviceId, { message: 'new_device is not a device id.' }),
});

export async function deviceLifecycleRoutes(
  app: FastifyInstance,
  options: { ctx: OperatorApiContext; accounts: BrokerAccounts },
): Promise<void> {
  const { ctx, accounts } = options;

  app.post('/ops/devices/:id/pairing-code', async (request) => {
    const { id } = validate(deviceParams, request.params);
    const code = await pairingCodeFor(ctx, id);
    if (!code) {
      throw new ApiError('conflict', {
        message: 'Only a provisioned controller on no customer’s account gets a pairing code.',
      });
    }
    return { device_id: id, pairing_code: code.code, pairing_expires_at: code.expiresAt.toISOString() };
  });

  app.post('/ops/devices/:id/remove', async (request) => {
    const { id } = validate(deviceParams, request.params);
    const removed = await retireDevice(ctx, accounts, id);
    return { device_id: id, revoked_keys: removed.revokedKeys, deleted: removed.deleted };
  });

  app.post('/ops/devices/:id/replace', async (request) => {
    const { id } = validate(deviceParams, request.params);
    const body = validate(replaceBody, request.body ?? {});
    const replaced = await replaceController(ctx, accounts, {
      oldDeviceId: id,
      target: { deviceId: body.new_device },
    });
    return {
      old_device: replaced.oldDeviceId,
      new_device: replaced.newDeviceId,
      carried_objects: replaced.carried,
      revoked_keys: replaced.revokedKeys,
    };
  });
}
