import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { serverSecret } from './server-secret.js';

/**
 * Short texts a browser keeps for the server without being able to read or change them (docs/design.md section
 * 10.2), or a secret the server must read again but keeps out of a table's plain columns (section 6): sealed with AES-256-GCM under a secret every instance shares (server-secret.ts), one secret per
 * purpose, so that any instance opens what another sealed, the holder learns nothing from the bytes, and a text
 * changed, forged or sealed for another purpose does not open. The result is base64url, fit for a cookie.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Far beyond anything sealed here; a longer value is not even decoded. */
const SEALED_MAX = 4096;

export async function seal(db: Database, purpose: string, text: string): Promise<string> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await secretFor(db, purpose), iv, {
    authTagLength: TAG_BYTES,
  });
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The text `seal` sealed for `purpose`, or null for anything else. */
export async function unseal(db: Database, purpose: string, sealed: string): Promise<string | null> {
  if (sealed.length > SEALED_MAX || !/^[A-Za-z0-9_-]+$/.test(sealed)) return null;
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv(
    'aes-256-gcm',
    await secretFor(db, purpose),
    bytes.subarray(0, IV_BYTES),
    {
      authTagLength: TAG_BYTES,
    },
  );
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
}

function secretFor(db: Database, purpose: string): Promise<Buffer> {
  return serverSecret(db, `sealed:${purpose}`);
}
