import type { SigningKey } from '../../../shared/crypto/ed25519.js';
import { strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import type { Database } from '../../foundation/db/database.js';

/** This instance's service key is not the one the database was first used with. */
export class ServiceKeyMismatchError extends Error {
  override name = 'ServiceKeyMismatchError';
}

/**
 * Every instance on one database signs with one service key (docs/design.md sections 6 and 7): the database
 * keeps the public half of the first key it met (migration 0008), and an instance with another one refuses to
 * start rather than sign commands and webhooks that nothing would verify. A database from before that migration
 * adopts the key of the first instance that starts on it.
 */
export async function checkRecordedServiceKey(db: Database, key: SigningKey, file: string): Promise<void> {
  await db
    .insertInto('service_key')
    .values({ id: 1, public_key: key.publicKey.base64 })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const row = await db
    .selectFrom('service_key')
    .select('public_key')
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  if (row.public_key === key.publicKey.base64) return;
  throw new ServiceKeyMismatchError(
    `the service key in ${file} is not the one this database was made with (fingerprint ${key.publicKey.fingerprint}, expected ${fingerprintOf(row.public_key)}): copy the first instance's key file there (SIGNING_KEY_FILE)`,
  );
}

function fingerprintOf(base64: string): string {
  try {
    return strictPublicKeyFromBase64(base64).fingerprint;
  } catch {
    return `an unreadable key, ${base64.slice(0, 16)}...`;
  }
}
