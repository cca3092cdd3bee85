import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CloudContext } from '../../foundation/context.js';

/**
 * The VAPID key (RFC 8292), the P-256 key that signs every Web Push request the cloud sends (docs/design.md
 * section 10.6), in one PEM file beside the service key. A browser's subscription is bound to its public half:
 * a new key silently ends every subscription, so it is made once, like the service key: outside production at
 * first start, in production by `gatelink-admin keys init` only, and every instance on one database reads a
 * copy of the same file.
 */
export interface VapidKey {
  /** The public point, uncompressed (65 bytes), in base64url: what `pushManager.subscribe` is given. */
  readonly publicKey: string;
  /** The private scalar (32 bytes) in base64url, as the `web-push` package takes it. */
  readonly privateKey: string;
}

export function loadVapidKey(file: string, options: { make: boolean } = { make: true }): VapidKey {
  if (existsSync(file) || !options.make) return readVapidKey(file);
  return makeVapidKey(file);
}

/** The key in `file`; throws, naming the file, when it is missing or not a P-256 key in PEM. */
export function readVapidKey(file: string): VapidKey {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`the VAPID key file ${file} cannot be read (${code ?? 'error'})`);
  }
  try {
    return vapidKeyOf(createPrivateKey(pem));
  } catch {
    throw new Error(`the VAPID key file ${file} does not hold a P-256 private key in PEM`);
  }
}

/** A new key held in memory only, for a context assembled without a data folder (tests). */
export function generateVapidKey(): VapidKey {
  return vapidKeyOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
}

/** A new key written to `file`, 0600 in a folder made 0700 when new; never over an existing file. */
export function makeVapidKey(file: string): VapidKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
  return vapidKeyOf(privateKey);
}

function vapidKeyOf(key: KeyObject): VapidKey {
  const jwk = key.export({ format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y || !jwk.d) {
    throw new Error('not a P-256 private key');
  }
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x, 'base64url'),
    Buffer.from(jwk.y, 'base64url'),
  ]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d };
}

/** What sending Web Push stands on beyond the ground: the VAPID key the data folder keeps. */
export interface VapidContext extends CloudContext {
  readonly vapid: VapidKey;
}
