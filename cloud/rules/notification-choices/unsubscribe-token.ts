import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../foundation/db/database.js';
import { serverSecret } from '../../foundation/web/server-secret.js';

/**
 * The token of an e-mail's one-click unsubscribe link (docs/design.md section 10.7): the barrier, the person, and
 * an HMAC-SHA256 of both under a server secret every instance shares. The token is the authority (a mail client
 * posts it with no session and no CSRF token), so it cannot be made without the secret, and it can do one thing
 * only: stop that person's e-mails of that barrier. Nothing is stored per e-mail; a token stays good, which is
 * what a link in an old e-mail needs.
 */
const SECRET_NAME = 'notification-unsubscribe';
const TOKEN = /^(D[0-9A-Z]{10})\.([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/;

export interface UnsubscribeTarget {
  deviceId: string;
  customerId: number;
}

async function mac(db: Database, target: UnsubscribeTarget): Promise<Buffer> {
  return createHmac('sha256', await serverSecret(db, SECRET_NAME))
    .update(`unsubscribe:${target.deviceId}:${target.customerId}`)
    .digest();
}

export async function unsubscribeToken(db: Database, target: UnsubscribeTarget): Promise<string> {
  return `${target.deviceId}.${target.customerId}.${(await mac(db, target)).toString('base64url')}`;
}

/** Whom a token names, or null when it is not one the cloud made: malformed, forged, or for someone else. */
export async function readUnsubscribeToken(db: Database, token: string): Promise<UnsubscribeTarget | null> {
  const parts = TOKEN.exec(token);
  if (!parts) return null;
  const target = { deviceId: parts[1]!, customerId: Number(parts[2]) };
  if (target.customerId > 2_147_483_647) return null;
  // Compared as text: base64url's last character has spare bits, so decoding first would take two spellings.
  const given = Buffer.from(parts[3]!);
  const expected = Buffer.from((await mac(db, target)).toString('base64url'));
  return given.length === expected.length && timingSafeEqual(given, expected) ? target : null;
}

/**
 * The daily digest's own link (docs/design.md section 10.7): a digest tells of several barriers, and RFC 8058
 * wants one link that stops the e-mail it is in. `digest.<person>.<HMAC>`, signed over words of its own, so that
 * neither kind of token can be made from the other; it can only stop that person's digests.
 */
const DIGEST_TOKEN = /^digest\.([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/;

async function digestMac(db: Database, customerId: number): Promise<string> {
  return createHmac('sha256', await serverSecret(db, SECRET_NAME))
    .update(`unsubscribe-digest:${customerId}`)
    .digest('base64url');
}

export async function digestUnsubscribeToken(db: Database, customerId: number): Promise<string> {
  return `digest.${customerId}.${await digestMac(db, customerId)}`;
}

/** The person a digest token names, or null when it is not one the cloud made. */
export async function readDigestToken(db: Database, token: string): Promise<number | null> {
  const parts = DIGEST_TOKEN.exec(token);
  if (!parts) return null;
  const customerId = Number(parts[1]);
  if (customerId > 2_147_483_647) return null;
  const given = Buffer.from(parts[2]!);
  const expected = Buffer.from(await digestMac(db, customerId));
  return given.length === expected.length && timingSafeEqual(given, expected) ? customerId : null;
}
