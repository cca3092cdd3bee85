import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SigningKey } from '../../../shared/crypto/ed25519.js';

/**
 * The service key, the cloud's own Ed25519 key (docs/design.md section 0.1), in one PEM file. Instances that
 * share a database must share this file. Outside production the cloud makes it on first start; in production
 * `gatelink-admin keys init` makes it and the cloud only reads it (cloud/README.md, "Running in production").
 */
export function loadServiceKey(file: string, options: { make: boolean } = { make: true }): SigningKey {
  if (existsSync(file) || !options.make) return readServiceKey(file);
  return makeServiceKey(file);
}

/** The key in `file`; throws, naming the file, when it is missing or not an Ed25519 key in PEM. */
export function readServiceKey(file: string): SigningKey {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`the service key file ${file} cannot be read (${code ?? 'error'})`);
  }
  try {
    return SigningKey.fromPem(pem);
  } catch {
    throw new Error(`the service key file ${file} does not hold an Ed25519 private key in PEM`);
  }
}

/**
 * A new key written to `file`, 0600 in a folder made 0700 when it did not exist; never over an existing
 * file (the write fails with EEXIST), since replacing the key breaks every signature checked against it.
 */
export function makeServiceKey(file: string): SigningKey {
  const key = SigningKey.generate();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, key.toPem(), { mode: 0o600, flag: 'wx' });
  return key;
}
