import type { z } from 'zod';
import type { CloudContext } from '../../../foundation/context.js';
import type { DeviceStates } from '../../../rules/devices/device-states.js';
import type { AckJournal } from '../../../rules/journal/ack-journal.js';
import type { PositionReports } from '../../../rules/positions/position-reports.js';
import type { UpdateDelivery } from '../../../rules/rollouts/update-delivery.js';
import type { CommandWaiters } from '../command-waiters.js';
import type { DeviceKeys } from '../device-keys.js';

/** What every device-message handler gets besides the message. */
export interface DeviceMessageContext {
  ctx: CloudContext;
  keys: DeviceKeys;
  waiters: CommandWaiters;
  /** Acknowledgements into the journal, many controllers' in one commit (docs/design.md section 5.1). */
  acks: AckJournal;
  /** Position reports onto their objects and openings, many in one statement (docs/design.md section 7.5). */
  positions: PositionReports;
  /** Devices' `state` reports, many devices' in one statement (docs/design.md section 7.3). */
  states: DeviceStates;
  /** Rollouts' update commands, sent at once to a controller that comes online (docs/design.md section 12.4.2). */
  updates: UpdateDelivery;
}

/**
 * One kind of device message (shared/README.md, "Messages"). The dispatcher (../device-messages.ts) checks every
 * message against `schema` and checks that the device it names is the one whose topic it came on (the broker
 * let only that device publish there), dropping it with the handler's own log line otherwise; `handle` gets
 * only a message that passed both.
 */
export interface DeviceMessageHandler<T extends { device_id: string }> {
  schema: z.ZodType<T>;
  /** The log line of a message that does not pass the schema. */
  malformed: string;
  /** The log line of a message naming another device than its topic's. */
  foreign: string;
  /** Counts a message the dispatcher dropped, for a kind that is counted (position reports). */
  dropped?(ctx: CloudContext, reason: 'malformed' | 'foreign'): void;
  handle(deps: DeviceMessageContext, deviceId: string, message: T): Promise<void>;
}
