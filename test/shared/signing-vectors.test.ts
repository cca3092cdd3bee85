import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { afterAll, describe, expect, it } from 'vitest';
// Importing our module also sets ed.hashes.sha512, which @noble needs for its synchronous verify.
import {
  decodeBase64,
  KeyError,
  SigningKey,
  strictPublicKey,
  strictPublicKeyFromBase64,
} from '../../shared/crypto/ed25519.js';
import { baseString, bodyDigestHex } from '../../shared/crypto/request-signing.js';

/*
 * The request-signing vectors of the specification (made with an independent implementation) and RFC 8032's
 * own vectors, each checked by our verifier and by @noble/ed25519 in its strict (RFC 8032) mode, and our
 * signatures compared with OpenSSL's.
 */

interface SigningCase {
  name: string;
  headers: {
    'X-Service-Org': string;
    'X-Service-Ts': string;
    'X-Service-Nonce': string;
    'X-Service-Sig': string;
  };
  body: string;
  body_sha256_hex: string;
  base_string: string;
  valid: boolean;
}

interface SigningVectors {
  secret_seed_hex: string;
  key_file: { key: string };
  cases: SigningCase[];
  keys_to_refuse: { name: string; key: string; forged_signature_for_any_message?: string }[];
}

interface RfcCase {
  name: string;
  secret_key: string;
  public_key: string;
  message: string;
  signature: string;
}

const vectorsDir = new URL('../vectors/', import.meta.url);
const signing = JSON.parse(
  readFileSync(new URL('request-signing.json', vectorsDir), 'utf8'),
) as SigningVectors;
const rfc = JSON.parse(readFileSync(new URL('rfc8032.json', vectorsDir), 'utf8')) as { cases: RfcCase[] };

/** The group order L of Ed25519. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const utf8 = (text: string) => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

function fromBase64(text: string): Uint8Array {
  const bytes = decodeBase64(text);
  if (!bytes) throw new Error(`not base64: ${text}`);
  return bytes;
}

/** The second implementation: @noble/ed25519 with RFC 8032's rules, not ZIP 215's. */
function nobleVerify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** The same signature with S replaced by S + L: the same value modulo L, but not canonical. */
function withNonCanonicalS(signature: Uint8Array): Uint8Array {
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
  let t = s + L;
  const out = new Uint8Array(signature);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(t & 0xffn);
    t >>= 8n;
  }
  return out;
}

const temp = mkdtempSync(join(tmpdir(), 'gatelink-vectors-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Signs with `openssl pkeyutl -sign -rawin` (pure Ed25519) using the seed's PKCS#8 PEM. */
function opensslSign(seed: Uint8Array, message: Uint8Array, label: string): Uint8Array {
  const keyFile = join(temp, `${label}.pem`);
  const messageFile = join(temp, `${label}.msg`);
  const signatureFile = join(temp, `${label}.sig`);
  writeFileSync(keyFile, SigningKey.fromSeed(seed).toPem(), { mode: 0o600 });
  writeFileSync(messageFile, message);
  execFileSync('openssl', [
    'pkeyutl',
    '-sign',
    '-rawin',
    '-inkey',
    keyFile,
    '-in',
    messageFile,
    '-out',
    signatureFile,
  ]);
  return new Uint8Array(readFileSync(signatureFile));
}

describe('request-signing.json: the specification vectors', () => {
  const seed = hex(signing.secret_seed_hex);
  const publicKey = strictPublicKeyFromBase64(signing.key_file.key);

  it('the seed reproduces the key in the key file', () => {
    expect(SigningKey.fromSeed(seed).publicKey.base64).toBe(signing.key_file.key);
    expect(base64(ed.getPublicKey(seed))).toBe(signing.key_file.key);
  });

  describe.each(signing.cases)('case "$name"', (vector) => {
    const h = vector.headers;
    const signature = fromBase64(h['X-Service-Sig']);

    it('the body digest is the lowercase hex SHA-256 of the raw body', () => {
      expect(bodyDigestHex(vector.body)).toBe(vector.body_sha256_hex);
      expect(bodyDigestHex(utf8(vector.body))).toBe(vector.body_sha256_hex);
    });

    if (vector.valid) {
      it('our base string equals the vector', () => {
        expect(baseString(h['X-Service-Org'], h['X-Service-Ts'], h['X-Service-Nonce'], vector.body)).toBe(
          vector.base_string,
        );
      });

      it('the signature verifies under our VerifyKey and under @noble (strict)', () => {
        const message = utf8(vector.base_string);
        expect(publicKey.verify(message, signature)).toBe(true);
        expect(nobleVerify(signature, message, publicKey.bytes)).toBe(true);
      });

      it('signing the base string with the seed gives exactly the vector signature', () => {
        expect(base64(SigningKey.fromSeed(seed).sign(utf8(vector.base_string)))).toBe(h['X-Service-Sig']);
      });

      it('[attack:auth.malleable-signature] a non-canonical S (S + L) is refused by our VerifyKey and by @noble (strict)', () => {
        const message = utf8(vector.base_string);
        const malleated = withNonCanonicalS(signature);
        expect(malleated).not.toEqual(signature);
        expect(publicKey.verify(message, malleated)).toBe(false);
        expect(nobleVerify(malleated, message, publicKey.bytes)).toBe(false);
      });
    } else {
      it('the signature does not verify over the base string of the body actually sent', () => {
        const sent = utf8(
          baseString(h['X-Service-Org'], h['X-Service-Ts'], h['X-Service-Nonce'], vector.body),
        );
        expect(bodyDigestHex(vector.body)).not.toBe(vector.base_string.split('.').at(-1));
        expect(publicKey.verify(sent, signature)).toBe(false);
        expect(nobleVerify(signature, sent, publicKey.bytes)).toBe(false);
      });
    }
  });

  it('OpenSSL signs the base string of "request" exactly as we do, and ours verifies it', () => {
    const vector = signing.cases.find((item) => item.name === 'request')!;
    const message = utf8(vector.base_string);
    const theirs = opensslSign(seed, message, 'request');
    const ours = SigningKey.fromSeed(seed).sign(message);
    expect(base64(theirs)).toBe(base64(ours));
    expect(base64(theirs)).toBe(vector.headers['X-Service-Sig']);
    expect(publicKey.verify(message, theirs)).toBe(true);
  });

  it('a signature over a random message made by OpenSSL with a fresh seed verifies under ours', () => {
    const freshSeed = ed.utils.randomSecretKey();
    const message = utf8(`acme.example.1795000000.${'ab'.repeat(16)}.${bodyDigestHex('{"x":1}')}`);
    const theirs = opensslSign(freshSeed, message, 'fresh');
    const key = SigningKey.fromSeed(freshSeed);
    expect(base64(theirs)).toBe(base64(key.sign(message)));
    expect(key.publicKey.verify(message, theirs)).toBe(true);
    expect(key.publicKey.verify(utf8('another message'), theirs)).toBe(false);
  });
});

describe('request-signing.json: keys to refuse', () => {
  it.each(signing.keys_to_refuse)(
    '[attack:auth.weak-key] "$name" is refused by strictPublicKeyFromBase64',
    ({ key }) => {
      expect(() => strictPublicKeyFromBase64(key)).toThrow(KeyError);
    },
  );

  const identity = signing.keys_to_refuse.find((item) => item.forged_signature_for_any_message)!;

  it('[attack:auth.weak-key] the forged signature under the identity key never verifies through our API', () => {
    const forged = fromBase64(identity.forged_signature_for_any_message!);
    const identityBytes = fromBase64(identity.key);
    // No VerifyKey can be made from the identity point, by either entry point...
    expect(() => strictPublicKeyFromBase64(identity.key)).toThrow(KeyError);
    expect(() => strictPublicKey(identityBytes)).toThrow(KeyError);
    // ...and the strict second implementation refuses the forgery for any message too.
    for (const message of [
      '',
      'acme.example.1795000000.0123456789abcdef0123456789abcdef.00',
      'open the gate',
    ]) {
      expect(nobleVerify(forged, utf8(message), identityBytes)).toBe(false);
    }
  });
});

describe('rfc8032.json: RFC 8032 section 7.1', () => {
  describe.each(rfc.cases)('$name', (vector) => {
    const seed = hex(vector.secret_key);
    const message = hex(vector.message);
    const signature = hex(vector.signature);

    it('the secret key reproduces the public key', () => {
      expect(Buffer.from(SigningKey.fromSeed(seed).publicKey.bytes).toString('hex')).toBe(vector.public_key);
    });

    it('our signature is exactly the RFC signature', () => {
      expect(Buffer.from(SigningKey.fromSeed(seed).sign(message)).toString('hex')).toBe(vector.signature);
    });

    it('the RFC signature verifies under our VerifyKey and under @noble (strict)', () => {
      const key = strictPublicKey(hex(vector.public_key));
      expect(key.verify(message, signature)).toBe(true);
      expect(nobleVerify(signature, message, key.bytes)).toBe(true);
    });

    // OpenSSL 3.0's pkeyutl cannot read an empty input with -rawin ("Could not allocate 0 bytes"): TEST 1 is
    // left to the other two implementations.
    it.runIf(message.length > 0)('OpenSSL signs exactly the RFC signature', () => {
      const label = vector.name.replace(/[^A-Za-z0-9]+/g, '-');
      expect(Buffer.from(opensslSign(seed, message, label)).toString('hex')).toBe(vector.signature);
    });

    it('a changed message or a non-canonical S (S + L) is refused', () => {
      const key = strictPublicKey(hex(vector.public_key));
      const flipped = new Uint8Array([...message, 0]);
      expect(key.verify(flipped, signature)).toBe(false);
      expect(key.verify(message, withNonCanonicalS(signature))).toBe(false);
      expect(nobleVerify(withNonCanonicalS(signature), message, key.bytes)).toBe(false);
    });
  });
});
