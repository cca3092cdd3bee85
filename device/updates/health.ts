import { accessSync, constants } from 'node:fs';
import type { SigningKey } from '../../shared/crypto/ed25519.js';

export interface HealthProbe {
  connected: () => boolean;
  driversStarted: () => boolean;
  /** Signs and verifies with the device key, and finds the state folder writable. */
  selfCheck: () => boolean;
}

/** The device key signs, and its public half verifies the signature; the state folder can be written. */
export function selfCheck(deviceKey: SigningKey, stateDir: string): boolean {
  try {
    const message = new TextEncoder().encode('gatelink/self-check');
    if (!deviceKey.publicKey.verify(message, deviceKey.sign(message))) return false;
    accessSync(stateDir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
