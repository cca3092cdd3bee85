import { readFileSync } from 'node:fs';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { SigningKey, strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { type Ack, ackSchema, type Command, commandSchema } from '../../shared/protocol/messages.js';
import {
  ACK_TAG,
  COMMAND_TAG,
  signAck,
  signCommand,
  signedBytes,
  verifyAck,
  verifyCommand,
} from '../../shared/protocol/signing.js';

/**
 * Commands and acknowledgements against vectors signed with OpenSSL (test/vectors/protocol-signing.json):
 * the canonical text, the exact signatures, and verification by a second implementation (@noble, strict).
 */
interface Vectors {
  cloud_seed_hex: string;
  cloud_public_key: string;
  device_seed_hex: string;
  device_public_key: string;
  cases: {
    name: string;
    kind: 'command' | 'ack';
    message: Record<string, unknown>;
    signed_text: string;
    sig: string;
  }[];
}

const vectors = JSON.parse(
  readFileSync(new URL('../vectors/protocol-signing.json', import.meta.url), 'utf8'),
) as Vectors;
const cloudKey = SigningKey.fromSeed(Buffer.from(vectors.cloud_seed_hex, 'hex'));
const deviceKey = SigningKey.fromSeed(Buffer.from(vectors.device_seed_hex, 'hex'));

describe.each(vectors.cases)('$name', (vector) => {
  const isCommand = vector.kind === 'command';
  const tag = isCommand ? COMMAND_TAG : ACK_TAG;
  const signer = isCommand ? cloudKey : deviceKey;
  const publicKey = strictPublicKeyFromBase64(
    isCommand ? vectors.cloud_public_key : vectors.device_public_key,
  );

  it('builds the same canonical text', () => {
    expect(new TextDecoder().decode(signedBytes(tag, vector.message as never))).toBe(vector.signed_text);
  });

  it('makes the same signature as OpenSSL', () => {
    const signed = isCommand
      ? signCommand(signer, vector.message as Omit<Command, 'sig'>)
      : signAck(signer, vector.message as Omit<Ack, 'sig'>);
    expect(signed.sig).toBe(vector.sig);
  });

  it('passes the message schema and verifies under the pinned key', () => {
    const message = { ...vector.message, sig: vector.sig };
    if (isCommand) expect(verifyCommand(publicKey, commandSchema.parse(message))).toBe(true);
    else expect(verifyAck(publicKey, ackSchema.parse(message))).toBe(true);
  });

  it('verifies with a second implementation (@noble, RFC 8032 strict)', () => {
    const ok = ed.verify(
      Buffer.from(vector.sig, 'base64'),
      new TextEncoder().encode(vector.signed_text),
      publicKey.bytes,
      { zip215: false },
    );
    expect(ok).toBe(true);
  });

  it('fails once any field changes', () => {
    const tampered = { ...vector.message, received_at: 1, number_id: 18, sig: vector.sig };
    const verified = isCommand
      ? verifyCommand(publicKey, tampered as unknown as Command)
      : verifyAck(publicKey, tampered as unknown as Ack);
    expect(verified).toBe(false);
  });

  it('does not verify under the other side’s key', () => {
    const other = strictPublicKeyFromBase64(isCommand ? vectors.device_public_key : vectors.cloud_public_key);
    const message = { ...vector.message, sig: vector.sig };
    const verified = isCommand
      ? verifyCommand(other, message as unknown as Command)
      : verifyAck(other, message as unknown as Ack);
    expect(verified).toBe(false);
  });
});

describe('purpose tags', () => {
  it('keep a command signature from ever verifying as an acknowledgement', () => {
    const command = vectors.cases.find((vector) => vector.kind === 'command')!;
    const asAck = signedBytes(ACK_TAG, command.message as never);
    expect(cloudKey.publicKey.verify(asAck, Buffer.from(command.sig, 'base64'))).toBe(false);
  });

  it('refuse numbers that JSON cannot carry exactly', () => {
    expect(() => signedBytes(COMMAND_TAG, { v: 1, issued_at: 2 ** 60 })).toThrow(TypeError);
  });
});
