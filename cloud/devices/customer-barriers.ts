import { ApiError } from '../../shared/errors.js';
import type { Database } from '../db/database.js';

/**
 * A customer's barriers (docs/design.md section 9): a controller belongs to one customer at a time, and a
 * customer reaches only their own. Another customer's barrier answers exactly like one that does not exist.
 */
export interface CustomerBarrier {
  id: string;
  /** The customer's name for it, or the installer's label until they give one. */
  name: string;
  online: boolean;
  pairedAt: Date | null;
}

export async function customerBarrier(
  db: Database,
  customerId: number,
  deviceId: string,
): Promise<CustomerBarrier> {
  const row = await db
    .selectFrom('devices')
    .select(['id', 'name', 'label', 'online', 'paired_at'])
    .where('id', '=', deviceId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  return { id: row.id, name: row.name ?? row.label, online: row.online, pairedAt: row.paired_at };
}
