import type { Transaction as KyselyTransaction } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { DB } from '../../foundation/db/schema.js';

type Transaction = KyselyTransaction<DB>;

/**
 * What a controller's replacement and retirement (docs/design.md section 9.1) do to the receipts
 * (section 5.3), in their transactions.
 */

/**
 * The barrier's chains move to the new controller's id with its journal, keeping their genesis, seq and
 * hashes: no receipt changes. Called before the journal's rows move. A new controller that already holds a
 * chain of one of those owners (a controller that was once theirs) would make two chains of one owner on one
 * barrier, which the export cannot tell apart: the replacement is refused instead, before anything changed.
 */
export async function moveChains(trx: Transaction, move: { from: string; to: string }): Promise<void> {
  const clash = await trx
    .selectFrom('journal_chains as held')
    .innerJoin('journal_chains as moving', 'moving.customer_id', 'held.customer_id')
    .select('held.customer_id')
    .where('held.device_id', '=', move.to)
    .where('moving.device_id', '=', move.from)
    .limit(1)
    .executeTakeFirst();
  if (clash) {
    throw new ApiError('conflict', {
      message:
        'The new controller already holds sealed journal entries of this barrier’s owner from before; use another controller.',
    });
  }
  await trx
    .updateTable('journal_chains')
    .set({ device_id: move.to })
    .where('device_id', '=', move.from)
    .execute();
}

/**
 * A retired controller's record loses its public key; its acknowledgements, in its barrier's journal, still
 * need it to be checked, so it is kept here first.
 */
export async function keepRetiredKey(trx: Transaction, deviceId: string, now: Date): Promise<void> {
  const device = await trx
    .selectFrom('devices')
    .select('public_key')
    .where('id', '=', deviceId)
    .executeTakeFirst();
  if (!device?.public_key) return;
  await trx
    .insertInto('retired_device_keys')
    .values({ device_id: deviceId, public_key: device.public_key, retired_at: now })
    .onConflict((oc) => oc.column('device_id').doNothing())
    .execute();
}
