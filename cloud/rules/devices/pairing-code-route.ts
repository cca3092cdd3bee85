import type { FastifyInstance } from 'fastify';
import type { PairingCodeResponse } from '../../../shared/protocol/updates.js';
import type { CloudContext } from '../../foundation/context.js';
import { deviceCallFrom } from './device-calls.js';
import { pairingCodeFor } from './pairing-renewal.js';

/**
 * `POST /api/device/pairing-code` (docs/design.md section 9.1), called by `gatelink-device pairing-code` and
 * `status` with the controller's own key: the current pairing code of an unpaired controller, or a fresh one
 * once it has expired; `{paired: true, pairing_code: null}` once a customer has added it. Only the
 * controller that signed learns its code, and repeating the call within the signature's tolerance only
 * reads it again.
 */
export async function pairingCodeRoute(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  app.post('/api/device/pairing-code', { bodyLimit: 1024 }, async (request): Promise<PairingCodeResponse> => {
    const deviceId = await deviceCallFrom(options.ctx, request);
    const code = await pairingCodeFor(options.ctx, deviceId);
    if (!code) return { paired: true, pairing_code: null, pairing_expires_at: null };
    return { paired: false, pairing_code: code.code, pairing_expires_at: code.expiresAt.toISOString() };
  });
}
