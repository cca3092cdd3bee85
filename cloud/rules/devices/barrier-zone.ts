import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';
import { isTimeZone } from '../../foundation/zones/wall-clock.js';

/**
 * A barrier's time zone (docs/design.md section 3.1): its keys' hours are read in it, on every `open`, and the
 * times of its grants are typed and shown in it. An IANA name this runtime knows, checked before it is stored,
 * since the database would refuse an unknown one in the middle of an `open`.
 */
export async function setBarrierTimeZone(
  db: Database,
  input: { customerId: number; deviceId: string; zone: string },
): Promise<void> {
  if (!isTimeZone(input.zone)) {
    throw new ApiError('invalid_field', { field: 'time_zone', message: 'Choose a time zone from the list.' });
  }
  const result = await db
    .updateTable('devices')
    .set({ time_zone: input.zone })
    .where('id', '=', input.deviceId)
    .where('customer_id', '=', input.customerId)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n)
    throw new ApiError('not_found', { message: 'No such barrier among yours.' });
}
