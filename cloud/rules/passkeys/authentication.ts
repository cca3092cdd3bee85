import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from '@simplewebauthn/server';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { CHALLENGE_LIFETIME_MS, saveCeremony, takeCeremony } from './challenges.js';
import { relyingParty } from './relying-party.js';

/**
 * Signing in with a passkey (docs/design.md section 10.2). No name is asked for: the options list no
 * credentials, the browser offers the person's passkeys for this site, and the answer names the one chosen.
 */
export async function startSignIn(
  ctx: CloudContext,
): Promise<{ ceremony: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(ctx).id,
    timeout: CHALLENGE_LIFETIME_MS,
    userVerification: 'preferred',
  });
  const ceremony = await saveCeremony(ctx, {
    challenge: options.challenge,
    purpose: 'sign_in',
    customerId: null,
    displayName: null,
  });
  return { ceremony, options };
}

/**
 * Verifies the answer against the ceremony it names (used up here, whatever follows) and the passkey it names,
 * and returns that passkey's customer. The signature counter must grow when the authenticator keeps one: a
 * counter that goes back betrays a cloned authenticator, and @simplewebauthn/server refuses it.
 */
export async function finishSignIn(
  ctx: CloudContext,
  input: { ceremony: string; response: AuthenticationResponseJSON },
): Promise<number> {
  const ceremony = await takeCeremony(ctx, input.ceremony, 'sign_in');
  if (!ceremony) throw new ApiError('passkey_refused');
  const passkey = await ctx.db
    .selectFrom('passkeys')
    .select(['id', 'customer_id', 'credential_id', 'public_key', 'counter', 'transports'])
    .where('credential_id', '=', input.response.id)
    .executeTakeFirst();
  if (!passkey) throw new ApiError('passkey_unknown');
  const rp = relyingParty(ctx);
  const verified = await verifyAuthenticationResponse({
    response: input.response,
    expectedChallenge: ceremony.challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: {
      id: passkey.credential_id,
      publicKey: Buffer.from(passkey.public_key, 'base64url'),
      counter: passkey.counter,
      transports: passkey.transports,
    },
    requireUserVerification: false,
  }).catch(() => null);
  if (!verified?.verified) throw new ApiError('passkey_refused');
  await ctx.db
    .updateTable('passkeys')
    .set({
      counter: verified.authenticationInfo.newCounter,
      backed_up: verified.authenticationInfo.credentialBackedUp,
      last_used_at: ctx.clock.now(),
    })
    .where('id', '=', passkey.id)
    .execute();
  return passkey.customer_id;
}
