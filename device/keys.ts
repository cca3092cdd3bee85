import { readFileSync, statSync } from 'node:fs';
import { KeyError, SigningKey } from '../shared/crypto/ed25519.js';
import { KeyFileError } from './key-file-error.js';

export { KeyFileError };

/**
 * Reads the device's Ed25519 private key (PEM, PKCS#8). The file must be readable by its owner only: a key that
 * other users could read may have been copied, and the controller refuses to sign with it.
 */
export function readDeviceKey(path: string): SigningKey {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (error) {
    throw new KeyFileError(
      `private_key_file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); ` +
        'run gatelink-device provision to create it',
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyFileError(
      `private_key_file ${path} is open to other users (mode 0${mode.toString(8)}); run: chmod 600 ${path}`,
    );
  }
  try {
    return SigningKey.fromPem(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = error instanceof KeyError ? error.message : 'it is not a PEM private key';
    throw new KeyFileError(`private_key_file ${path} is not usable: ${why}; provision the controller again`);
  }
}
