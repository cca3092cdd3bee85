import {
  type PhoneBattery,
  type PhoneNetwork,
  phoneBatterySchema,
  phoneNetworkSchema,
} from '../../../shared/protocol/messages.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * How a phone controller stands (docs/design.md section 12.6): companies can open a gate that opens on a call
 * while the customer's phone is online (while it is offline, only if someone is asked to call it by hand,
 * section 10.9), so its owner sees when it last was, and what keeps it so, its battery and its mobile network,
 * from its last telemetry.
 */
export interface PhoneState {
  /** When the last telemetry came; null when none has. */
  heardAt: Date | null;
  battery: PhoneBattery | null;
  network: PhoneNetwork | null;
}

/** The phone's state, or null when the barrier has no object that a phone calls. */
export async function phoneState(db: Database, deviceId: string): Promise<PhoneState | null> {
  const row = await db
    .selectFrom('devices')
    .select(['telemetry', 'telemetry_at'])
    .where('id', '=', deviceId)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('device_objects')
          .select('device_objects.id')
          .whereRef('device_objects.device_id', '=', 'devices.id')
          .where('device_objects.kind', '=', 'phone')
          .where('device_objects.removed_at', 'is', null),
      ),
    )
    .executeTakeFirst();
  if (!row) return null;
  // Kept as the controller sent it, checked when it came; read again here field by field, so that telemetry of
  // an earlier release reads as unknown rather than breaking the page.
  const telemetry = (row.telemetry ?? {}) as { battery?: unknown; network?: unknown };
  const battery = phoneBatterySchema.safeParse(telemetry.battery);
  const network = phoneNetworkSchema.safeParse(telemetry.network);
  return {
    heardAt: row.telemetry_at,
    battery: battery.success ? battery.data : null,
    network: network.success ? network.data : null,
  };
}
