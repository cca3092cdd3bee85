import { type DeviceState, stateSchema } from '../../../../shared/protocol/messages.js';
import { applyUpdateReport } from '../../../rules/rollouts/update-reports.js';
import type { DeviceMessageHandler } from './handler.js';

/**
 * `.../state` (retained; the will sets it offline): whether the device is online, its version, and, when
 * given, its objects, its arch and its latest update report; written with other devices' reports in one statement (cloud/rules/devices/device-states.ts).
 */
export const stateHandler: DeviceMessageHandler<DeviceState> = {
  schema: stateSchema,
  malformed: 'dropped a malformed state',
  foreign: 'dropped a state naming another device',
  async handle({ ctx, states, updates }, deviceId, state) {
    const known = await states.record(deviceId, state);
    ctx.log.debug({ deviceId, online: state.online, known }, 'device state');
    if (!known) return;
    // The latest update report rides in the retained state (docs/design.md section 12.4.2).
    if (state.update) await applyUpdateReport(ctx, deviceId, state.update);
    if (state.online) await updates.deliverTo(deviceId);
  },
};
