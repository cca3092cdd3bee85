import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { SigningKey } from '../../../shared/crypto/ed25519.js';

/**
 * The operator's release key (docs/design.md section 12.4.1): an Ed25519 private key in PKCS#8 PEM, kept on the
 * machine that signs releases, never on the cloud. Controllers pin its public half at provisioning, so a lost or
 * replaced key means re-provisioning every controller: the file is never overwritten, and a copy readable by
 * others is refused, since anyone who reads it can sign what every controller will run.
 */

/** A new key in a new file, mode 0600; refuses a file that exists. */
export function makeReleaseKey(file: string): SigningKey {
  const key = SigningKey.generate();
  try {
    writeFileSync(file, key.toPem(), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new Error(`${file} exists: a release key is never overwritten (controllers pin its public key)`);
    }
    throw new Error(`the release key file ${file} cannot be written (${code ?? 'error'})`);
  }
  return key;
}

/** The key in `file`; one-line errors for a missing file, a mode that lets others read it, or another content. */
export function readReleaseKey(file: string): SigningKey {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`the release key file ${file} does not exist`);
    throw new Error(`the release key file ${file} cannot be read (${code ?? 'error'})`);
  }
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new Error(`the release key file ${file} has mode ${octal}: others may read it; chmod 600 ${file}`);
  }
  try {
    return SigningKey.fromPem(readFileSync(file, 'utf8'));
  } catch {
    throw new Error(`the release key file ${file} does not hold an Ed25519 private key in PEM`);
  }
}
