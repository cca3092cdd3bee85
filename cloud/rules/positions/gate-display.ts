import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * What a customer sees of their gates' sensors (docs/design.md sections 7.5 and 10.4): each sensed object's
 * position now and since when, whether it has stayed open past the barrier's limit, and the barrier's two
 * limits, which the customer sets. The positions are written by the controller's reports; here they are only
 * read.
 */
export interface SensedObject {
  numberId: number;
  label: string;
  /** Null until the controller first reports it. */
  position: 'open' | 'closed' | null;
  /** When the gate took that position, on the controller's clock. */
  since: Date | null;
  /** When the alert about the gate left open was raised; cleared when it closes. */
  leftOpenAt: Date | null;
}

export interface GateLimits {
  /** How long a gate may stay open before it counts as left open, in seconds. */
  leftOpenLimitS: number;
  /** How soon after the relay fired the gate must be seen moving, in seconds. */
  moveTimeoutS: number;
}

/** The limits as the form offers them, within what the database allows (migration 0010). */
export const LEFT_OPEN_MINUTES = { min: 1, max: 1440, default: 10 } as const;
export const MOVE_TIMEOUT_SECONDS = { min: 5, max: 600, default: 30 } as const;

/**
 * Whether the gate counts as left open at `now`: open, and either the alert was raised or it has been open
 * longer than the limit (the page says so before the next sweep raises the alert, and a limit made shorter
 * counts at once).
 */
export function isLeftOpen(object: SensedObject, limits: GateLimits, now: Date): boolean {
  if (object.position !== 'open') return false;
  if (object.leftOpenAt) return true;
  return object.since !== null && now.getTime() - object.since.getTime() > limits.leftOpenLimitS * 1000;
}

/**
 * The sensed objects of a barrier and its limits, read under its owner (`customerId`): the caller has checked that
 * the reader may look at it (docs/design.md section 9.2); another owner's barrier answers 404.
 */
export async function barrierGates(
  db: Database,
  customerId: number,
  deviceId: string,
): Promise<{ objects: SensedObject[]; limits: GateLimits }> {
  const [device, objects] = await Promise.all([
    db
      .selectFrom('devices')
      .select(['left_open_limit_s', 'move_timeout_s'])
      .where('id', '=', deviceId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst(),
    sensedRows(db).where('device_objects.device_id', '=', deviceId).execute(),
  ]);
  if (!device) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  return { objects: objects.map(toSensed), limits: toLimits(device) };
}

/**
 * The customer's gates left open now, by barrier, on the barriers they own or share (docs/design.md section 9.2):
 * what the list of barriers shows first. One query over those barriers' open sensed objects, whatever their number.
 */
export async function leftOpenGates(
  db: Database,
  customerId: number,
  now: Date,
): Promise<Map<string, SensedObject[]>> {
  const rows = await sensedRows(db)
    .innerJoin('devices', 'devices.id', 'device_objects.device_id')
    .select(['device_objects.device_id', 'devices.left_open_limit_s', 'devices.move_timeout_s'])
    .where((eb) =>
      eb.or([
        eb('devices.customer_id', '=', customerId),
        eb(
          'devices.id',
          'in',
          eb
            .selectFrom('barrier_members')
            .select('barrier_members.device_id')
            .where('barrier_members.customer_id', '=', customerId),
        ),
      ]),
    )
    .where('device_objects.position', '=', 'open')
    .execute();
  const byBarrier = new Map<string, SensedObject[]>();
  for (const row of rows) {
    const object = toSensed(row);
    if (!isLeftOpen(object, toLimits(row), now)) continue;
    byBarrier.set(row.device_id, [...(byBarrier.get(row.device_id) ?? []), object]);
  }
  return byBarrier;
}

/**
 * The owner sets their barrier's limits; a member's and another customer's attempt answer 404 and leave it as it
 * was: the limits are the owner's (docs/design.md section 9.2).
 */
export async function setGateLimits(
  db: Database,
  input: { customerId: number; deviceId: string; limits: GateLimits },
): Promise<void> {
  const { leftOpenLimitS, moveTimeoutS } = input.limits;
  const minutes = leftOpenLimitS / 60;
  if (!Number.isInteger(minutes) || minutes < LEFT_OPEN_MINUTES.min || minutes > LEFT_OPEN_MINUTES.max)
    throw new ApiError('invalid_field', { field: 'left_open_minutes', message: 'Out of range.' });
  if (
    !Number.isInteger(moveTimeoutS) ||
    moveTimeoutS < MOVE_TIMEOUT_SECONDS.min ||
    moveTimeoutS > MOVE_TIMEOUT_SECONDS.max
  )
    throw new ApiError('invalid_field', { field: 'move_timeout_seconds', message: 'Out of range.' });
  const saved = await db
    .updateTable('devices')
    .set({ left_open_limit_s: leftOpenLimitS, move_timeout_s: moveTimeoutS })
    .where('id', '=', input.deviceId)
    .where('customer_id', '=', input.customerId)
    .returning('id')
    .executeTakeFirst();
  if (!saved) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
}

/** The objects with a sensor that the controller reports now (removed ones are gone from its configuration). */
function sensedRows(db: Database) {
  return db
    .selectFrom('device_objects')
    .select([
      'device_objects.id',
      'device_objects.label',
      'device_objects.position',
      'device_objects.position_since',
      'device_objects.left_open_at',
    ])
    .where('device_objects.has_sensor', '=', true)
    .where('device_objects.removed_at', 'is', null)
    .orderBy('device_objects.id');
}

function toSensed(row: {
  id: number;
  label: string;
  position: 'open' | 'closed' | null;
  position_since: Date | null;
  left_open_at: Date | null;
}): SensedObject {
  return {
    numberId: row.id,
    label: row.label,
    position: row.position,
    since: row.position_since,
    leftOpenAt: row.left_open_at,
  };
}

function toLimits(row: { left_open_limit_s: number; move_timeout_s: number }): GateLimits {
  return { leftOpenLimitS: row.left_open_limit_s, moveTimeoutS: row.move_timeout_s };
}
