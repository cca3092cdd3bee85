import { ApiError } from '../../../shared/errors.js';
import { isPrintableText } from '../../../shared/printable-text.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * A customer's barriers (docs/design.md section 9): a controller belongs to one customer at a time, and a
 * customer reaches only their own. Another customer's barrier answers exactly like one that does not exist.
 */
export interface CustomerBarrier {
  id: string;
  /** The customer's name for it, or the installer's label until they give one. */
  name: string;
  online: boolean;
  /** When the controller last reported whether it is online; null when it never has. */
  onlineSince: Date | null;
  pairedAt: Date | null;
  /** Its IANA time zone: its keys' hours are read, and its times typed, in it (docs/design.md section 3.1). */
  timeZone: string;
}

/** An object of a barrier (a relay or a number to dial), by the `number_id` companies open it with. */
export interface BarrierObject {
  numberId: number;
  label: string;
  kind: string;
}

export async function customerBarrier(
  db: Database,
  customerId: number,
  deviceId: string,
): Promise<CustomerBarrier> {
  const row = await barrierRows(db)
    .where('id', '=', deviceId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  return toBarrier(row);
}

/** The customer's barriers, in the order they were paired. */
export async function customerBarriers(db: Database, customerId: number): Promise<CustomerBarrier[]> {
  const rows = await barrierRows(db)
    .where('customer_id', '=', customerId)
    .orderBy('paired_at')
    .orderBy('id')
    .execute();
  return rows.map(toBarrier);
}

/** The objects the controller reports now (removed ones are gone from its configuration). */
export async function barrierObjects(
  db: Database,
  deviceIds: string[],
): Promise<Map<string, BarrierObject[]>> {
  const byBarrier = new Map<string, BarrierObject[]>(deviceIds.map((id) => [id, []]));
  if (deviceIds.length === 0) return byBarrier;
  const rows = await db
    .selectFrom('device_objects')
    .select(['device_id', 'id', 'label', 'kind'])
    .where('device_id', 'in', deviceIds)
    .where('removed_at', 'is', null)
    .orderBy('id')
    .execute();
  for (const row of rows) {
    byBarrier.get(row.device_id)?.push({ numberId: row.id, label: row.label, kind: row.kind });
  }
  return byBarrier;
}

/** The longest name a customer gives a barrier: it heads a page and a line of a list. */
export const BARRIER_NAME_MAX = 60;

/**
 * What is wrong with a barrier's name, said to the customer, or null: it is printable text (docs/design.md
 * section 1), since it is shown on pages and journal lines, and one short line.
 */
export function barrierNameProblem(name: string): string | null {
  if (name.length === 0) return 'Give the barrier a name, such as Home, Mill Lane 4 or Holiday flat.';
  if ([...name].length > BARRIER_NAME_MAX) return `Keep the name to ${BARRIER_NAME_MAX} characters.`;
  if (!isPrintableText(name)) return 'Use letters, digits, spaces and punctuation only, on one line.';
  return null;
}

/** The customer renames their own barrier; another customer's answers 404 and is left as it was. */
export async function renameBarrier(
  db: Database,
  input: { customerId: number; deviceId: string; name: string },
): Promise<void> {
  const problem = barrierNameProblem(input.name);
  if (problem) throw new ApiError('invalid_field', { field: 'name', message: problem });
  const renamed = await db
    .updateTable('devices')
    .set({ name: input.name })
    .where('id', '=', input.deviceId)
    .where('customer_id', '=', input.customerId)
    .returning('id')
    .executeTakeFirst();
  if (!renamed) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
}

function barrierRows(db: Database) {
  return db
    .selectFrom('devices')
    .select(['id', 'name', 'label', 'online', 'state_at', 'paired_at', 'time_zone']);
}

function toBarrier(row: {
  id: string;
  name: string | null;
  label: string;
  online: boolean;
  state_at: Date | null;
  paired_at: Date | null;
  time_zone: string;
}): CustomerBarrier {
  return {
    id: row.id,
    name: row.name ?? row.label,
    online: row.online,
    onlineSince: row.state_at,
    pairedAt: row.paired_at,
    timeZone: row.time_zone,
  };
}
