import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';

/**
 * A secret that every cloud instance on one database must share, made by whichever starts first
 * (docs/design.md section 10). Kept in the database, never in a file of one instance.
 */
export async function serverSecret(db: Database, name: string): Promise<Buffer> {
  await db
    .insertInto('server_secrets')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
