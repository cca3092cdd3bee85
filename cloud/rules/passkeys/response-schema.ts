import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';

/**
 * The browser's answers to a ceremony, checked for shape before @simplewebauthn/server reads them
 * (docs/design.md section 10.2): base64url strings of bounded length, so that odd input is a 400, never a
 * failure deep in a parser. The whole JSON body is bounded by the server's body limit besides.
 */
const base64url = (max: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url')
    .max(max);
const transports = z.array(z.string().max(32)).max(8);
const extensions = z.record(z.string(), z.unknown());
const attachment = z.enum(['platform', 'cross-platform']);

export const registrationResponse = z.object({
  id: base64url(1366).min(1),
  rawId: base64url(1366).min(1),
  type: z.literal('public-key'),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults: extensions,
  response: z.object({
    clientDataJSON: base64url(4096),
    attestationObject: base64url(16384),
    authenticatorData: base64url(8192).optional(),
    transports: transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url(8192).optional(),
  }),
}) satisfies z.ZodType<RegistrationResponseJSON>;

export const authenticationResponse = z.object({
  id: base64url(1366).min(1),
  rawId: base64url(1366).min(1),
  type: z.literal('public-key'),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults: extensions,
  response: z.object({
    clientDataJSON: base64url(4096),
    authenticatorData: base64url(8192),
    signature: base64url(2048),
    userHandle: base64url(128).optional(),
  }),
}) satisfies z.ZodType<AuthenticationResponseJSON>;
