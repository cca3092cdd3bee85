import { strictPublicKeyFromBase64, type VerifyKey } from '../../../shared/crypto/ed25519.js';

/**
 * Public keys by their base64 text, strictly checked once per process (a VerifyKey can only come from the
 * strict check) and then kept, so the hot path is one native verify. Used for pinned company keys and for
 * device keys alike.
 */
export class VerifyKeyCache {
  readonly #keys = new Map<string, VerifyKey>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  get(base64: string): VerifyKey {
    let key = this.#keys.get(base64);
    if (!key) {
      key = strictPublicKeyFromBase64(base64);
      if (this.#keys.size >= this.#limit) this.#keys.clear();
      this.#keys.set(base64, key);
    }
    return key;
  }
}
