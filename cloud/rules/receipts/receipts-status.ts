import type { Database } from '../../foundation/db/database.js';

/** What the barrier page says of a customer's receipts (docs/design.md section 5.3): how many, and the last check. */
export interface ReceiptsStatus {
  sealed: number;
  checkedAt: Date | null;
  /** Null while intact; else the entry where the chain broke (null when entries are missing at its end) and why. */
  broken: { entry: number | null; reason: string } | null;
}

export async function receiptsStatus(
  db: Database,
  where: { deviceId: string; customerId: number },
): Promise<ReceiptsStatus> {
  const row = await db
    .selectFrom('journal_chains')
    .select(['seq', 'checked_at', 'broken_entry', 'broken_reason'])
    .where('device_id', '=', where.deviceId)
    .where('customer_id', '=', where.customerId)
    .executeTakeFirst();
  if (!row) return { sealed: 0, checkedAt: null, broken: null };
  return {
    sealed: row.seq,
    checkedAt: row.checked_at,
    broken: row.broken_reason === null ? null : { entry: row.broken_entry, reason: row.broken_reason },
  };
}
