import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { ScalarResult, SqlType } from '../../foundation/db/function-result.js';

/**
 * What key_openings_used returns (`returns integer` in ./key-openings-used.sql, the one place that counts a key's
 * spent openings), declared here once; a test compares it with the database's catalog.
 */
export const keyOpeningsUsedResult = {
  function: 'key_openings_used',
  returns: 'integer',
} as const satisfies ScalarResult<SqlType>;

/** The spent openings of each key that counts them (`openings_allowed` set), by key id. */
export async function openingsUsed(db: Database, keyIds: readonly number[]): Promise<Map<number, number>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('keys')
    .select(['keys.id', sql<number>`key_openings_used(keys.id, keys.openings_allowed)`.as('used')])
    .where('keys.id', 'in', [...keyIds])
    .where('keys.openings_allowed', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.used)]));
}
