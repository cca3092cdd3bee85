import { type DeviceState, stateSchema } from '../../../../shared/protocol/messages.js';
import type { DeviceMessageHandler } from './handler.js';

/**
 * `.../state` (retained; the will sets it offline): whether the device is online, its version, and, when
 * given, its objects; written with other devices' reports in one statement (cloud/rules/devices/device-states.ts).
 */
export const stateHandler: DeviceMessageHandler<DeviceState> = {
  schema: stateSchema,
  malformed: 'dropped a malformed state',
  foreign: 'dropped a state naming another device',
  async handle({ ctx, states }, deviceId, state) {
    const known = await states.record(deviceId, state);
    ctx.log.debug({ deviceId, online: state.online, known }, 'device state');
  },
};
