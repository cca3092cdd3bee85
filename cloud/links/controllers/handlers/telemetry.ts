import { type Telemetry, telemetrySchema } from '../../../../shared/protocol/messages.js';
import { jsonb } from '../../../foundation/db/database.js';
import type { DeviceMessageHandler } from './handler.js';

/** `.../telemetry`: the device's periodic health report, kept whole with the cloud's time of receipt. */
export const telemetryHandler: DeviceMessageHandler<Telemetry> = {
  schema: telemetrySchema,
  malformed: 'dropped malformed telemetry',
  foreign: 'dropped telemetry naming another device',
  async handle({ ctx }, deviceId, telemetry) {
    await ctx.db
      .updateTable('devices')
      .set({ telemetry: jsonb(telemetry), telemetry_at: ctx.clock.now() })
      .where('id', '=', deviceId)
      .execute();
  },
};
