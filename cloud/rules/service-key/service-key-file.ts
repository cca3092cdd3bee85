import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SigningKey } from '../../../shared/crypto/ed25519.js';

/** The service key, the cloud's own Ed25519 key (docs/design.md section 0.1), made on first start. Instances that share a database must share this file. */
export function loadServiceKey(file: string): SigningKey {
  if (existsSync(file)) return SigningKey.fromPem(readFileSync(file, 'utf8'));
  const key = SigningKey.generate();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, key.toPem(), { mode: 0o600, flag: 'wx' });
  return key;
}
