import { ApiError } from '../../../shared/errors.js';
import { isPrintableText } from '../../../shared/printable-text.js';
import type { Database } from '../../foundation/db/database.js';
import {
  type BarrierNeed,
  type BarrierRole,
  householdBarriers,
  NO_SUCH_BARRIER,
  roleAllows,
  roleOf,
} from '../households/barrier-roles.js';

/**
 * A customer's barriers (docs/design.md sections 9 and 9.2): a controller belongs to one customer at a time, who
 * may share it with a household; a customer reaches the barriers they own or are a member of, each as far as
 * their role allows (cloud/rules/households/barrier-roles.ts). Any other barrier answers exactly like one that
 * does not exist.
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
  /** What the reader may do on it, and whose it is: the household shares the owner's keys and journal. */
  role: BarrierRole;
  ownerId: number;
  /** The owner's name, shown on a barrier shared with the reader; null on the reader's own. */
  sharedBy: string | null;
}

/** An object of a barrier (a relay or a number to dial), by the `number_id` companies open it with. */
export interface BarrierObject {
  numberId: number;
  label: string;
  kind: string;
}

/** One barrier of the customer's, when their role allows `need`; else 404, as for one that does not exist. */
export async function customerBarrier(
  db: Database,
  customerId: number,
  deviceId: string,
  need: BarrierNeed,
): Promise<CustomerBarrier> {
  const row = await barrierRows(db, customerId).where('devices.id', '=', deviceId).executeTakeFirst();
  const barrier = row && toBarrier(row, customerId);
  if (!barrier || !roleAllows(barrier.role, need))
    throw new ApiError('not_found', { message: NO_SUCH_BARRIER });
  return barrier;
}

/** The barriers the customer owns, then those shared with them, each in the order it was paired. */
export async function customerBarriers(db: Database, customerId: number): Promise<CustomerBarrier[]> {
  const rows = await barrierRows(db, customerId)
    .orderBy((eb) => eb.case().when('devices.customer_id', '=', customerId).then(0).else(1).end())
    .orderBy('devices.paired_at')
    .orderBy('devices.id')
    .execute();
  return rows.map((row) => toBarrier(row, customerId));
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

/**
 * The owner renames their barrier; a member's and another customer's answer 404 and are left as they were: the
 * name is the owner's (docs/design.md section 9.2).
 */
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
  if (!renamed) throw new ApiError('not_found', { message: NO_SUCH_BARRIER });
}

function barrierRows(db: Database, customerId: number) {
  return householdBarriers(db, customerId).select([
    'devices.name',
    'devices.label',
    'devices.online',
    'devices.state_at',
    'devices.paired_at',
    'devices.time_zone',
  ]);
}

function toBarrier(
  row: {
    id: string;
    name: string | null;
    label: string;
    online: boolean;
    state_at: Date | null;
    paired_at: Date | null;
    time_zone: string;
    owner_id: number;
    owner_name: string;
    may_grant: boolean | null;
  },
  customerId: number,
): CustomerBarrier {
  const role = roleOf({ customerId, ownerId: row.owner_id, mayGrant: row.may_grant });
  return {
    id: row.id,
    name: row.name ?? row.label,
    online: row.online,
    onlineSince: row.state_at,
    pairedAt: row.paired_at,
    timeZone: row.time_zone,
    role,
    ownerId: row.owner_id,
    sharedBy: role === 'owner' ? null : row.owner_name,
  };
}
