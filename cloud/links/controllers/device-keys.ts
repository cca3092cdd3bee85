import { KeyError, type VerifyKey } from '../../../shared/crypto/ed25519.js';
import type { CloudContext } from '../../foundation/context.js';
import { VerifyKeyCache } from '../../rules/domain-keys/verify-keys.js';

/** How long a device's key is trusted from memory before it is read again. */
const KEY_TTL_MS = 60_000;

/**
 * The devices' public keys, kept in memory for a minute so that an acknowledgement costs no extra query.
 * A re-provisioned device has a new key: an ack that does not verify under the remembered key is checked
 * once more against the stored one (`fresh`), so a key change on any instance is seen at the first ack.
 */
export class DeviceKeys {
  readonly #ctx: CloudContext;
  readonly #cache = new Map<string, { key: VerifyKey | null; until: number }>();
  /** Refreshing a device's key re-reads its text, but parses a text it has seen only once. */
  readonly #parsed = new VerifyKeyCache();

  constructor(ctx: CloudContext) {
    this.#ctx = ctx;
  }

  /** The device's key, or null when it has none or the stored one is not a valid Ed25519 key. */
  async forDevice(deviceId: string, options: { fresh?: boolean } = {}): Promise<VerifyKey | null> {
    const now = this.#ctx.clock.now().getTime();
    const cached = this.#cache.get(deviceId);
    if (cached && cached.until > now && !options.fresh) return cached.key;
    const row = await this.#ctx.db
      .selectFrom('devices')
      .select('public_key')
      .where('id', '=', deviceId)
      .executeTakeFirst();
    const key = row?.public_key ? this.#parse(deviceId, row.public_key) : null;
    this.#cache.set(deviceId, { key, until: now + KEY_TTL_MS });
    return key;
  }

  #parse(deviceId: string, text: string): VerifyKey | null {
    try {
      return this.#parsed.get(text);
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
