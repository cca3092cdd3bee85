import type { CloudContext } from '../../context.js';
import type { CommandWaiters } from '../command-waiters.js';
import type { DeviceKeys } from '../device-keys.js';

/** What every device-message handler gets: the message's device (from its topic) and its parsed JSON body. */
export interface DeviceMessageContext {
  ctx: CloudContext;
  keys: DeviceKeys;
  waiters: CommandWaiters;
}

export interface IncomingDeviceMessage {
  /** From the topic: the broker let only this device publish there. */
  deviceId: string;
  body: unknown;
}
