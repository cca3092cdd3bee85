import type { FastifyInstance } from 'fastify';
import { provisionRequestSchema } from '../../../shared/protocol/provisioning.js';
import type { CloudContext } from '../../foundation/context.js';
import { validate } from '../../foundation/http/validation.js';
import { type DeviceAccounts, provisionDevice } from './devices.js';

/** `POST /api/device/provision` (docs/design.md section 9), called by `gatelink-device provision`. */
export async function provisioningRoute(
  app: FastifyInstance,
  options: { ctx: CloudContext; accounts: DeviceAccounts },
): Promise<void> {
  app.post('/api/device/provision', { bodyLimit: 16 * 1024 }, async (request) => {
    const body = validate(provisionRequestSchema, request.body);
    return provisionDevice(options.ctx, options.accounts, body);
  });
}
