import { randomBytes } from 'node:crypto';
import {
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { type Ceremony, CHALLENGE_LIFETIME_MS, saveCeremony, takeCeremony } from './challenges.js';
import type { NewCredential } from './passkeys.js';
import { relyingParty } from './relying-party.js';

/**
 * Making a passkey (docs/design.md section 10.2), for a new account (`sign_up`) or for the signed-in customer's
 * own (`add`). The passkey is discoverable, so that signing in later needs no name typed; user verification is
 * preferred, not required, so that a security key without a PIN still works. The user handle is random per
 * passkey: a passkey is found by its credential id, and the handle tells nothing about the account.
 */
/**
 * The algorithms a passkey may use: Ed25519, ES256 and RS256, named here rather than left to the library, which
 * puts ML-DSA-44 first whenever the Node.js it runs on has it (24 does). A passkey made through such an instance
 * could not be checked by one on Node.js 20 or 22 during a rolling upgrade, and its signatures are larger than the
 * answers' bounds (./response-schema.ts) allow (docs/design.md section 10.2).
 */
export const PASSKEY_ALGORITHMS = [-8, -7, -257];

export type Registration =
  | { purpose: 'sign_up'; displayName: string }
  | { purpose: 'add'; customerId: number; displayName: string; userName: string };

export async function startRegistration(
  ctx: CloudContext,
  who: Registration,
): Promise<{ ceremony: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const rp = relyingParty(ctx);
  const customerId = who.purpose === 'add' ? who.customerId : null;
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: randomBytes(32),
    userName: who.purpose === 'add' ? who.userName : who.displayName,
    userDisplayName: who.displayName,
    timeout: CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    excludeCredentials: customerId === null ? [] : await registeredCredentials(ctx, customerId),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
  const ceremony = await saveCeremony(ctx, {
    challenge: options.challenge,
    purpose: who.purpose,
    customerId,
    displayName: who.displayName,
  });
  return { ceremony, options };
}

/**
 * Verifies the browser's answer against the ceremony it names, which it uses up. For `add`, the ceremony must
 * have been started by the same customer. Any failure is `passkey_refused`: an answer for another challenge,
 * origin or relying party, a replayed one, or one after the ceremony's 5 minutes.
 */
export async function finishRegistration(
  ctx: CloudContext,
  input: {
    ceremony: string;
    purpose: 'sign_up' | 'add';
    customerId: number | null;
    response: RegistrationResponseJSON;
  },
): Promise<{ ceremony: Ceremony; credential: NewCredential }> {
  const ceremony = await takeCeremony(ctx, input.ceremony, input.purpose);
  if (!ceremony || ceremony.customerId !== input.customerId) throw new ApiError('passkey_refused');
  const rp = relyingParty(ctx);
  const verified = await verifyRegistrationResponse({
    response: input.response,
    expectedChallenge: ceremony.challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  }).catch(() => null);
  if (!verified?.verified) throw new ApiError('passkey_refused');
  const info = verified.registrationInfo;
  return {
    ceremony,
    credential: {
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: info.credential.transports ?? [],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
    },
  };
}

/** The customer's passkeys, so that an authenticator already holding one is not asked for a second. */
async function registeredCredentials(
  ctx: CloudContext,
  customerId: number,
): Promise<{ id: string; transports?: string[] }[]> {
  const rows = await ctx.db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('customer_id', '=', customerId)
    .execute();
  return rows.map((row) => ({ id: row.credential_id, transports: row.transports }));
}
