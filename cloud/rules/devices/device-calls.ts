import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { KeyError, strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import { ApiError } from '../../../shared/errors.js';
import { isDeviceId } from '../../../shared/protocol/topics.js';
import {
  DEVICE_CALL_HEADERS,
  DEVICE_CALL_TOLERANCE_MS,
  verifyDeviceCall,
} from '../../../shared/protocol/updates.js';
import type { CloudContext } from '../../foundation/context.js';

/**
 * Who made a call signed with a device key (docs/design.md section 12.4): the controller's id, once its
 * signature over the method, the path, the time and the body verifies with the public key it registered at
 * provisioning, and the time is within DEVICE_CALL_TOLERANCE_MS of the cloud's. Anything else answers 401
 * `device_auth_failed`, the same for an unknown device as for a bad signature. A call cannot be replayed for
 * another path or body; within the tolerance it can be repeated, which is why device calls only read or
 * renew what the device already may have.
 */
export async function deviceCallFrom(ctx: CloudContext, request: FastifyRequest): Promise<string> {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const deviceId = header(DEVICE_CALL_HEADERS.device);
  const time = header(DEVICE_CALL_HEADERS.time);
  const signature = header(DEVICE_CALL_HEADERS.signature);
  if (!deviceId || !isDeviceId(deviceId) || !time || !/^\d{1,15}$/.test(time) || !signature) {
    throw new ApiError('device_auth_failed');
  }
  if (Math.abs(Number(time) - ctx.clock.now().getTime()) > DEVICE_CALL_TOLERANCE_MS) {
    throw new ApiError('device_auth_failed');
  }
  const device = await ctx.db
    .selectFrom('devices')
    .select('public_key')
    .where('id', '=', deviceId)
    .where('provisioned_at', 'is not', null)
    .executeTakeFirst();
  if (!device?.public_key) throw new ApiError('device_auth_failed');
  let key: ReturnType<typeof strictPublicKeyFromBase64>;
  try {
    key = strictPublicKeyFromBase64(device.public_key);
  } catch (error) {
    if (error instanceof KeyError) throw new ApiError('device_auth_failed');
    throw error;
  }
  const body = request.body;
  const bytes = Buffer.isBuffer(body)
    ? body
    : typeof body === 'string'
      ? Buffer.from(body)
      : body === undefined || body === null
        ? Buffer.alloc(0)
        : Buffer.from(JSON.stringify(body));
  const call = {
    method: request.method,
    path: request.url,
    time: Number(time),
    bodySha256: createHash('sha256').update(bytes).digest('hex'),
  };
  if (!verifyDeviceCall(key, deviceId, call, signature)) throw new ApiError('device_auth_failed');
  return deviceId;
}
