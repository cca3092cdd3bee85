import { telemetrySchema } from '../../../shared/protocol/messages.js';
import { jsonb } from '../../db/database.js';
import type { DeviceMessageContext, IncomingDeviceMessage } from './handler.js';

/** `.../telemetry`: the device's periodic health report, kept whole with the cloud's time of receipt. */
export async function handleTelemetry(
  deps: DeviceMessageContext,
  message: IncomingDeviceMessage,
): Promise<void> {
  const { ctx } = deps;
  const { deviceId } = message;
  const parsed = telemetrySchema.safeParse(message.body);
  if (!parsed.success) {
    ctx.log.warn({ deviceId, issues: parsed.error.issues.length }, 'dropped malformed telemetry');
    return;
  }
  if (parsed.data.device_id !== deviceId) {
    ctx.log.warn({ deviceId, named: parsed.data.device_id }, 'dropped telemetry naming another device');
    return;
  }
  await ctx.db
    .updateTable('devices')
    .set({ telemetry: jsonb(parsed.data), telemetry_at: ctx.clock.now() })
    .where('id', '=', deviceId)
    .execute();
}
