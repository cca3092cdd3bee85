import type { FastifyInstance } from 'fastify';
import { provisionRequestSchema } from '../../../shared/protocol/provisioning.js';
import type { CloudContext } from '../../context.js';
import { validate } from '../../foundation/http/validation.js';
import type { Broker } from '../../links/controllers/broker.js';
import { provisionDevice } from './devices.js';

/** `POST /api/device/provision` (docs/design.md section 9), called by `gatelink-device provision`. */
export async function provisioningRoute(
  app: FastifyInstance,
  options: { ctx: CloudContext; broker: Pick<Broker, 'addDevice' | 'deviceUrl'> },
): Promise<void> {
  app.post('/api/device/provision', { bodyLimit: 16 * 1024 }, async (request) => {
    const body = validate(provisionRequestSchema, request.body);
    return provisionDevice(options.ctx, options.broker, body);
  });
}
