import type { CloudContext } from '../../foundation/context.js';
import type { GatePosition } from '../../foundation/db/schema.js';

/** An object of a barrier as its sensor last saw it (docs/design.md section 5.2). */
export interface ObjectPosition {
  /** The object's number (device_objects.id), as keys and the journal name it. */
  numberId: number;
  label: string;
  hasSensor: boolean;
  /** null when no report came yet (or the object has no sensor). */
  position: GatePosition | null;
  /** When the gate took that position, on the controller's clock. */
  since: Date | null;
  /** Set while the gate is open past the barrier's limit: when that was found. */
  leftOpenAt: Date | null;
}

/** Each current object's position on the customer's barrier, by number; empty when it is not theirs. */
export async function barrierPositions(
  ctx: CloudContext,
  customerId: number,
  deviceId: string,
): Promise<ObjectPosition[]> {
  const rows = await ctx.db
    .selectFrom('device_objects')
    .innerJoin('devices', 'devices.id', 'device_objects.device_id')
    .select([
      'device_objects.id',
      'device_objects.label',
      'device_objects.has_sensor',
      'device_objects.position',
      'device_objects.position_since',
      'device_objects.left_open_at',
    ])
    .where('device_objects.device_id', '=', deviceId)
    .where('devices.customer_id', '=', customerId)
    .where('device_objects.removed_at', 'is', null)
    .orderBy('device_objects.id')
    .execute();
  return rows.map((row) => ({
    numberId: row.id,
    label: row.label,
    hasSensor: row.has_sensor,
    position: row.position,
    since: row.position_since,
    leftOpenAt: row.left_open_at,
  }));
}
