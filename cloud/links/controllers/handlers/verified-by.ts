import type { VerifyKey } from '../../../../shared/crypto/ed25519.js';
import type { DeviceMessageContext } from './handler.js';

/**
 * Whether a device's signed message verifies under its key: the remembered one, and once more under the stored
 * one in case the device was re-provisioned since. Every signed message kind (acknowledgements, position
 * reports) is checked here, so none is trusted on weaker terms than another.
 */
export async function verifiedBy(
  keys: DeviceMessageContext['keys'],
  deviceId: string,
  verify: (key: VerifyKey) => boolean | Promise<boolean>,
): Promise<boolean> {
  const remembered = await keys.forDevice(deviceId);
  if (remembered && (await verify(remembered))) return true;
  const stored = await keys.forDevice(deviceId, { fresh: true });
  return stored !== null && (await verify(stored));
}
