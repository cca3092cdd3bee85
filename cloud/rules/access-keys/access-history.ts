import type { Transaction } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { AccessAct, DB } from '../../foundation/db/schema.js';
import { tellAccessChange } from '../push-notifications/alert-recipients.js';

/**
 * A barrier's history (docs/design.md section 10.4): who gave, changed or withdrew which company's access, and
 * when. A row is written in the transaction of its act, so the history never tells of an act that was not
 * committed nor misses one that was. `customerId` is who did it; null when none of the barrier's customers did,
 * as when the controller changed hands and the previous owner's keys ended with the pairing. The others of the
 * household are told of an act by someone in the same transaction (docs/design.md section 10.7): once, and only
 * of an act that was committed; never on `open`'s path, which writes no history.
 */
export async function recordAccessAct(
  trx: Transaction<DB>,
  input: {
    act: AccessAct;
    key: { id: number; device_id: string; company_id: number };
    customerId: number | null;
    at: Date;
  },
): Promise<void> {
  const row = await trx
    .insertInto('access_history')
    .values({
      device_id: input.key.device_id,
      at: input.at,
      customer_id: input.customerId,
      act: input.act,
      key_id: input.key.id,
      company_id: input.key.company_id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (input.customerId !== null) await tellAccessChange(trx, row.id, input.at);
}

/** The history lines a barrier's page shows. */
export const HISTORY_SHOWN = 20;

export interface AccessHistoryLine {
  at: Date;
  act: AccessAct;
  /** The customer's name as they gave it; null when none of the barrier's customers did it. */
  by: string | null;
  company: string;
}

/**
 * The latest acts on the keys that `customerId` gave on the barrier, newest first. Only their own keys: a
 * controller that changed hands shows its new owner nothing of what the previous one granted (section 10.4).
 */
export async function accessHistory(
  db: Database,
  input: { deviceId: string; customerId: number },
): Promise<AccessHistoryLine[]> {
  const rows = await db
    .selectFrom('access_history')
    .innerJoin('keys', 'keys.id', 'access_history.key_id')
    .innerJoin('companies', 'companies.id', 'access_history.company_id')
    .leftJoin('customers', 'customers.id', 'access_history.customer_id')
    .select([
      'access_history.at',
      'access_history.act',
      'customers.display_name as by',
      'companies.name as company',
    ])
    .where('access_history.device_id', '=', input.deviceId)
    .where('keys.customer_id', '=', input.customerId)
    .orderBy('access_history.at', 'desc')
    .orderBy('access_history.id', 'desc')
    .limit(HISTORY_SHOWN)
    .execute();
  return rows;
}
