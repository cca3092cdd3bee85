import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { seal, unseal } from '../../foundation/web/sealing.js';
import type { WebDeps } from '../../foundation/web/web-deps.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';
import { displayName } from './account-input.js';

/**
 * The e-mail code this browser waits for (docs/design.md section 10.2): the address it went to and, at sign-up,
 * the name the account is to have, from asking for the code until entering it. They are not carried in the
 * address of the code page, where they would stay in the browser's history and land in the logs of servers and
 * proxies, but in a cookie. A cookie rather than a row: the pending code is one browser's for a few minutes,
 * like the CSRF secret kept in the cookie beside it; it works without script and across instances, and leaves
 * nothing to purge. Sealed (sealing.ts): nobody reads the address off the cookie, and nobody makes one for an
 * address they did not ask a code for. Entering the code checks it against this address and no other, so a
 * code sent to one address never signs into another's account.
 */
export type PendingCode =
  | { purpose: 'sign-in'; email: string; displayName?: string | undefined }
  /** Confirming an address for the signed-in account it was asked from. */
  | { purpose: 'confirm'; email: string; customerId: number };

/**
 * How long the browser keeps it: well past the code's 10 minutes, so that a late entry is told the code
 * expired and offered a new one, and no longer, so that an address does not linger on a shared device.
 */
const PENDING_MS = 3600 * 1000;
const SEALED_FOR = 'pending-code';

/** What the cookie holds, read back at the edge like any input; `until` is when the browser stops waiting. */
const waitsUntil = z.number();
const sealedPending = z.discriminatedUnion('purpose', [
  z.object({
    purpose: z.literal('sign-in'),
    email: emailAddress,
    displayName: displayName.optional(),
    until: waitsUntil,
  }),
  z.object({
    purpose: z.literal('confirm'),
    email: emailAddress,
    customerId: z.number().int(),
    until: waitsUntil,
  }),
]);

/** Remembers the code just sent on this browser, in place of any it waited for before. */
export async function keepPendingCode(
  deps: WebDeps,
  reply: FastifyReply,
  pending: PendingCode,
): Promise<void> {
  const until = deps.ctx.clock.now().getTime() + PENDING_MS;
  const sealed = await seal(deps.ctx.db, SEALED_FOR, JSON.stringify({ ...pending, until }));
  reply.setCookie(deps.cookies.pendingCodeName, sealed, {
    ...deps.cookies.options,
    maxAge: PENDING_MS / 1000,
  });
}

/** The sign-in or sign-up code this browser waits for, or null. */
export async function pendingSignIn(
  deps: WebDeps,
  request: FastifyRequest,
): Promise<Extract<PendingCode, { purpose: 'sign-in' }> | null> {
  const pending = await readPendingCode(deps, request);
  return pending?.purpose === 'sign-in' ? pending : null;
}

/** The address the signed-in customer waits to confirm on this browser, or null. */
export async function pendingConfirmation(deps: WebDeps, request: FastifyRequest): Promise<string | null> {
  const pending = await readPendingCode(deps, request);
  const customerId = request.customer?.customerId;
  return pending?.purpose === 'confirm' && pending.customerId === customerId ? pending.email : null;
}

/** Once the code has done its work, or the browser signs in or out, it waits for none. */
export function forgetPendingCode(deps: WebDeps, request: FastifyRequest, reply: FastifyReply): void {
  if (request.cookies[deps.cookies.pendingCodeName] === undefined) return;
  reply.clearCookie(deps.cookies.pendingCodeName, deps.cookies.options);
}

async function readPendingCode(deps: WebDeps, request: FastifyRequest): Promise<PendingCode | null> {
  const sealed = request.cookies[deps.cookies.pendingCodeName];
  if (!sealed) return null;
  const text = await unseal(deps.ctx.db, SEALED_FOR, sealed);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const read = sealedPending.safeParse(value);
  if (!read.success || read.data.until <= deps.ctx.clock.now().getTime()) return null;
  return read.data;
}
