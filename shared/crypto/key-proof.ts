import { decodeBase64, KeyError, type SigningKey, strictPublicKeyFromBase64 } from './ed25519.js';

/**
 * The proof that a company holds the private half of the key its domain publishes (docs/design.md section
 * 11.2): the company signs a text the service shows, and the service verifies it strictly against the key it
 * fetched. Shared so that the service and the key-pair tool (`company/`) agree on every byte.
 *
 * The text names the service, the company and the key, so a proof made for one company or one key proves
 * nothing for another. It starts with a prefix that no signed call's base string can start with (a base string
 * starts with a domain, which has no colon), and the tool signs nothing else, so the tool cannot be talked
 * into signing an API call under the name of a proof.
 */
export const KEY_PROOF_PREFIX = 'gatelink-key-proof:v1:';

export interface KeyProofSubject {
  /** The service's host, as in its base URL (`gate.example.com`, `localhost:8080`). */
  serviceHost: string;
  companyId: number;
  /** The company's domain, ASCII. */
  domain: string;
  /** The key's fingerprint, as `VerifyKey.fingerprint` writes it. */
  fingerprint: string;
}

export function keyProofText(subject: KeyProofSubject): string {
  return `${KEY_PROOF_PREFIX}${subject.serviceHost}:${subject.companyId}:${subject.domain}:${subject.fingerprint}`;
}

export function isKeyProofText(text: string): boolean {
  return text.startsWith(KEY_PROOF_PREFIX) && /^[\x21-\x7e]+$/.test(text) && text.length <= 512;
}

/** Standard base64 of the Ed25519 signature of the text's UTF-8 bytes. */
export function signKeyProof(key: SigningKey, text: string): string {
  if (!isKeyProofText(text)) {
    throw new KeyError(`only a key proof text is signed here; it starts with ${KEY_PROOF_PREFIX}`);
  }
  return Buffer.from(key.sign(new TextEncoder().encode(text))).toString('base64');
}

/**
 * Whether `signature` (standard base64, padding optional, surrounding spaces ignored as a paste leaves them)
 * is the signature of `text` by `publicKey` (base64), with the strict checks of shared/crypto/ed25519.ts.
 */
export function verifyKeyProof(publicKey: string, text: string, signature: string): boolean {
  const bytes = decodeBase64(signature.trim());
  if (bytes?.length !== 64) return false;
  try {
    return strictPublicKeyFromBase64(publicKey).verify(new TextEncoder().encode(text), bytes);
  } catch (error) {
    if (error instanceof KeyError) return false;
    throw error;
  }
}
