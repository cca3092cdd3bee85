import { randomInt } from 'node:crypto';

/**
 * Crockford base32: digits and letters without I, L, O and U, so codes read aloud or typed from a screen
 * do not mix up 1/I/L or 0/O. Drawn from the cryptographic source: request codes are bearer secrets.
 */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function randomCode(length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += CROCKFORD_ALPHABET[randomInt(32)];
  return code;
}

/** Reads a code as a person may type it: upper or lower case, O for 0, I and L for 1, no hyphens or spaces. */
export function normalizeCode(text: string): string {
  return text.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

export function isCode(text: string, length: number): boolean {
  return text.length === length && [...text].every((char) => CROCKFORD_ALPHABET.includes(char));
}
