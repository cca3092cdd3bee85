import { decodeBase64, type SigningKey, type VerifyKey } from '../crypto/ed25519.js';
import type { Ack, Command, UnsignedAck, UnsignedCommand } from './messages.js';

/**
 * The canonical byte form that commands and acknowledgements are signed over: a purpose tag, a newline,
 * then the message without `sig` as JSON with keys in code-point order and no white space. The tag keeps a
 * signature made for one kind of message from ever verifying as another.
 */
export const COMMAND_TAG = 'gatelink/command/v1';
export const ACK_TAG = 'gatelink/ack/v1';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };

export function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as Json)}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new TypeError('only safe integers are allowed in signed messages');
  }
  return JSON.stringify(value);
}

export function signedBytes(tag: string, message: Record<string, Json | undefined>): Uint8Array {
  const { sig: _sig, ...unsigned } = message;
  return new TextEncoder().encode(`${tag}\n${canonicalJson(unsigned)}`);
}

export function signCommand(key: SigningKey, command: UnsignedCommand): Command {
  const sig = Buffer.from(key.sign(signedBytes(COMMAND_TAG, command))).toString('base64');
  return { ...command, sig };
}

export function verifyCommand(key: VerifyKey, command: Command): boolean {
  return verifySignature(key, signedBytes(COMMAND_TAG, command), command.sig);
}

export function signAck(key: SigningKey, ack: UnsignedAck): Ack {
  const sig = Buffer.from(key.sign(signedBytes(ACK_TAG, ack))).toString('base64');
  return { ...ack, sig };
}

export function verifyAck(key: VerifyKey, ack: Ack): boolean {
  return verifySignature(key, signedBytes(ACK_TAG, ack), ack.sig);
}

/**
 * Only the canonical base64 of a signature verifies (shared/README.md, "Ed25519, strictly"): Buffer ignores
 * the four spare bits of the last character, so sixteen texts would otherwise carry one signature, and a copy
 * of a command whose `sig` was changed would still be the cloud's.
 */
export function verifySignature(key: VerifyKey, bytes: Uint8Array, sig: string): boolean {
  const signature = decodeBase64(sig);
  return signature !== null && key.verify(bytes, signature);
}

/** verifySignature on libuv's thread pool, for a server that verifies many messages at once. */
export function verifySignatureOffThread(key: VerifyKey, bytes: Uint8Array, sig: string): Promise<boolean> {
  const signature = decodeBase64(sig);
  return signature === null ? Promise.resolve(false) : key.verifyOffThread(bytes, signature);
}
