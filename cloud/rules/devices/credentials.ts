import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Broker passwords of devices: 32 random bytes, given to the device once at provisioning and stored as a
 * SHA-256 hash (a 256-bit random secret needs no slow hash); compared in constant time.
 */
export function newDevicePassword(): string {
  return randomBytes(32).toString('base64url');
}

export function hashDevicePassword(password: string | Buffer): string {
  return createHash('sha256').update(password).digest('hex');
}

export function devicePasswordMatches(password: string | Buffer, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const presented = createHash('sha256').update(password).digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
