import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import * as ed from '@noble/ed25519';

/**
 * Ed25519 for every signature in the project: company calls, commands, acknowledgements, webhooks.
 *
 * Two layers, on purpose. Node's native verifier is fast but lenient: on Node 20 it accepts a forged signature
 * for any message under a small-order key such as the identity point. So a public key reaches the native
 * verifier only as a `VerifyKey`, which can only be made by `strictPublicKey`, and that refuses keys that are
 * not 32 bytes, not canonically encoded, of small order or with a torsion component (checked with @noble).
 * Signatures with a non-canonical S (S >= L) are refused before the native call as well (RFC 8032 5.1.7).
 */
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest());

/** The group order L. */
const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

export class KeyError extends Error {
  override name = 'KeyError';
}

/** A public key that passed the strict checks; the only thing `verify` accepts. */
export class VerifyKey {
  readonly bytes: Uint8Array;
  readonly #native: KeyObject;

  private constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.#native = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes).toString('base64url') },
      format: 'jwk',
    });
  }

  /** Made only by strictPublicKey after its checks. */
  static fromChecked(bytes: Uint8Array): VerifyKey {
    return new VerifyKey(bytes);
  }

  get base64(): string {
    return Buffer.from(this.bytes).toString('base64');
  }

  /** SHA-256 of the raw key, hex, in groups of four: what operators and companies compare by eye. */
  get fingerprint(): string {
    const hex = createHash('sha256').update(this.bytes).digest('hex');
    return hex.match(/.{4}/g)!.slice(0, 8).join(':');
  }

  verify(message: Uint8Array, signature: Uint8Array): boolean {
    if (!wellFormed(signature)) return false;
    return nodeVerify(null, message, this.#native, signature);
  }

  /**
   * The same check on libuv's thread pool: a verification costs the event loop about 0.12 ms, which is most
   * of a signed call's own work, so a server verifying many calls at once lets the pool do it while the loop
   * serves others (docs/design.md section 2.1).
   */
  verifyOffThread(message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    if (!wellFormed(signature)) return Promise.resolve(false);
    return new Promise((resolve, reject) =>
      nodeVerify(null, message, this.#native, signature, (error, valid) =>
        error ? reject(error) : resolve(valid),
      ),
    );
  }
}

/** 64 bytes with a canonical S (S < L, RFC 8032 5.1.7): anything else is refused before the native call. */
function wellFormed(signature: Uint8Array): boolean {
  return signature.length === 64 && isCanonicalScalar(signature.subarray(32));
}

/** Checks a raw public key strictly; throws KeyError saying what is wrong with it. */
export function strictPublicKey(bytes: Uint8Array): VerifyKey {
  if (bytes.length !== 32)
    throw new KeyError(`an Ed25519 public key is 32 bytes, this one is ${bytes.length}`);
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(bytes, false);
  } catch {
    throw new KeyError('the key is not a valid point on Ed25519');
  }
  if (!bytesEqual(point.toBytes(), bytes)) throw new KeyError('the key is not canonically encoded');
  if (point.isSmallOrder()) throw new KeyError('the key is a small-order point');
  if (!point.isTorsionFree()) throw new KeyError('the key has a torsion component');
  return VerifyKey.fromChecked(new Uint8Array(bytes));
}

/** Parses standard base64 (padding optional) into a strictly checked key. */
export function strictPublicKeyFromBase64(text: string): VerifyKey {
  const bytes = decodeBase64(text);
  if (!bytes) throw new KeyError('the key is not standard base64');
  return strictPublicKey(bytes);
}

/** Standard base64 with optional padding; null when the text is anything else. */
export function decodeBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64');
  // Buffer ignores stray bits; round-tripping refuses encodings that are not the canonical one.
  if (bytes.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) return null;
  return new Uint8Array(bytes);
}

function isCanonicalScalar(s: Uint8Array): boolean {
  let value = 0n;
  for (let i = s.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(s[i]!);
  return value < GROUP_ORDER;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** A private signing key with its public half. */
export class SigningKey {
  readonly #native: KeyObject;
  readonly publicKey: VerifyKey;

  private constructor(native: KeyObject) {
    this.#native = native;
    const jwk = createPublicKey(native).export({ format: 'jwk' });
    this.publicKey = strictPublicKey(new Uint8Array(Buffer.from(jwk.x!, 'base64url')));
  }

  static generate(): SigningKey {
    return new SigningKey(generateKeyPairSync('ed25519').privateKey);
  }

  static fromPem(pem: string): SigningKey {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') throw new KeyError('the private key is not an Ed25519 key');
    return new SigningKey(key);
  }

  /** From the 32-byte RFC 8032 seed. */
  static fromSeed(seed: Uint8Array): SigningKey {
    if (seed.length !== 32) throw new KeyError('an Ed25519 seed is 32 bytes');
    const x = Buffer.from(ed.getPublicKey(seed)).toString('base64url');
    const d = Buffer.from(seed).toString('base64url');
    return new SigningKey(createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x, d }, format: 'jwk' }));
  }

  toPem(): string {
    return this.#native.export({ format: 'pem', type: 'pkcs8' }).toString();
  }

  sign(message: Uint8Array): Uint8Array {
    return new Uint8Array(nodeSign(null, message, this.#native));
  }
}
