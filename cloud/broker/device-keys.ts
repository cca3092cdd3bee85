import { KeyError, strictPublicKeyFromBase64, type VerifyKey } from '../../shared/crypto/ed25519.js';
import type { CloudContext } from '../context.js';

/**
 * The devices' public keys, read from `devices.public_key` on every use (a re-provisioned device has a new
 * one) and parsed once per distinct key text.
 */
export class DeviceKeys {
  readonly #ctx: CloudContext;
  readonly #parsed = new Map<string, { text: string; key: VerifyKey | null }>();

  constructor(ctx: CloudContext) {
    this.#ctx = ctx;
  }

  /** The device's key, or null when it has none or the stored one is not a valid Ed25519 key. */
  async forDevice(deviceId: string): Promise<VerifyKey | null> {
    const row = await this.#ctx.db
      .selectFrom('devices')
      .select('public_key')
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!row?.public_key) return null;
    const cached = this.#parsed.get(deviceId);
    if (cached?.text === row.public_key) return cached.key;
    const key = this.#parse(deviceId, row.public_key);
    this.#parsed.set(deviceId, { text: row.public_key, key });
    return key;
  }

  #parse(deviceId: string, text: string): VerifyKey | null {
    try {
      return strictPublicKeyFromBase64(text);
    } catch (error) {
      if (!(error instanceof KeyError)) throw error;
      this.#ctx.log.error(
        { deviceId, reason: error.message },
        'the stored public key of a device is unusable',
      );
      return null;
    }
  }
}
