import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';

/**
 * A secret that every cloud instance on one database must share, made by whichever starts first
 * (docs/design.md section 10). Kept in the database, never in a file of one instance. It never changes once
 * made, so each instance reads it once per database and keeps it.
 */
const known = new WeakMap<Database, Map<string, Promise<Buffer>>>();

export function serverSecret(db: Database, name: string): Promise<Buffer> {
  let secrets = known.get(db);
  if (!secrets) {
    secrets = new Map();
    known.set(db, secrets);
  }
  let secret = secrets.get(name);
  if (!secret) {
    secret = readOrMake(db, name);
    // A failed read (the database was down) is not kept: the next caller tries again.
    secret.catch(() => secrets.delete(name));
    secrets.set(name, secret);
  }
  return secret;
}

async function readOrMake(db: Database, name: string): Promise<Buffer> {
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
