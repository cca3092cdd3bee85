import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { type AttemptLimit, countAttempt } from '../../foundation/web/attempt-limit.js';
import { CODE_LIFETIME_MS, CODE_TRIES, type CodeCheck, checkCode, issueCode } from './codes.js';

export interface CodeMessage {
  to: string;
  code: string;
  validMinutes: number;
  /** When the code ends, and the zone its reader reads times in (docs/design.md section 10.1). */
  expiresAt: Date;
  zone: string;
}

/**
 * What sending a sign-in code stands on beyond the ground: something that hands a code to its e-mail address
 * (cloud/links/mail/mailer.ts, over SMTP or into the log) and resolves once it is handed over.
 */
export interface SignInCodesContext extends CloudContext {
  readonly mailer: { sendCode(message: CodeMessage): Promise<void> };
}

/**
 * Asking for a code and entering one, within the limits of docs/design.md section 10.2. The limits per address
 * stop one client from flooding mailboxes or guessing; the limits per e-mail stop many clients together from
 * flooding one mailbox, and bound the guesses against one address to 5 tries of 5 codes an hour and 10 codes a
 * day, whatever the number of clients.
 */
const HOUR = 3600 * 1000;

export const CODE_LIMITS = {
  sendsPerAddress: {
    bucket: 'email-code:send:address',
    max: 20,
    windowMs: HOUR,
    message: (wait) => `Too many codes were asked for from your network. Wait ${wait}, or use a passkey.`,
  },
  sendsPerEmailHour: {
    bucket: 'email-code:send:email-hour',
    max: 5,
    windowMs: HOUR,
    message: (wait) =>
      `Too many codes were sent to this address. Use the newest one, or wait ${wait} before asking again.`,
  },
  sendsPerEmailDay: {
    bucket: 'email-code:send:email-day',
    max: 10,
    windowMs: 24 * HOUR,
    message: (wait) =>
      `Too many codes were sent to this address today. Use the newest one, or wait ${wait} before asking again.`,
  },
  checksPerAddress: {
    bucket: 'email-code:check:address',
    max: 30,
    windowMs: HOUR,
    message: (wait) => `Too many codes were tried from your network. Wait ${wait} and try again.`,
  },
} as const satisfies Record<string, AttemptLimit>;

export const CODE_LIFETIME_MINUTES = CODE_LIFETIME_MS / 60_000;

/**
 * Sends a fresh code to `email`, whether or not an account has that address: the answer must not tell anyone
 * which addresses have one. The address limit is counted first, so that a client already refused cannot use up
 * someone's e-mail allowance.
 */
export async function sendCode(
  ctx: SignInCodesContext,
  input: { email: string; clientKey: string; zone?: string | undefined },
): Promise<void> {
  await countAttempt(ctx, CODE_LIMITS.sendsPerAddress, input.clientKey);
  await countAttempt(ctx, CODE_LIMITS.sendsPerEmailHour, input.email);
  await countAttempt(ctx, CODE_LIMITS.sendsPerEmailDay, input.email);
  const code = await issueCode(ctx, input.email);
  const expiresAt = new Date(ctx.clock.now().getTime() + CODE_LIFETIME_MS);
  const zone = input.zone ?? (await zoneOfAddress(ctx, input.email));
  try {
    await ctx.mailer.sendCode({
      to: input.email,
      code,
      validMinutes: CODE_LIFETIME_MINUTES,
      expiresAt,
      zone,
    });
  } catch (error) {
    ctx.log.error({ err: error }, 'a sign-in code could not be sent');
    throw new ApiError('email_unavailable');
  }
}

/**
 * The zone the code's e-mail gives its end in: that of the account the address is confirmed on, else UTC. Only
 * the address's owner reads it, so it tells nobody else whether the address has an account.
 */
async function zoneOfAddress(ctx: CloudContext, email: string): Promise<string> {
  const row = await ctx.db
    .selectFrom('customers')
    .select('time_zone')
    .where('email', '=', email)
    .executeTakeFirst();
  return row?.time_zone ?? 'UTC';
}

/** Checks a code someone typed, after counting the try against their address. */
export async function tryCode(
  ctx: CloudContext,
  input: { email: string; code: string; clientKey: string },
): Promise<CodeCheck> {
  await countAttempt(ctx, CODE_LIMITS.checksPerAddress, input.clientKey);
  return checkCode(ctx, input.email, input.code);
}

/** What the person is told when a code does not sign them in: what happened and what to do. */
export function codeProblem(check: Exclude<CodeCheck, { ok: true }>): string {
  switch (check.reason) {
    case 'wrong':
      return check.triesLeft > 0
        ? `That is not the code we sent. Check the newest e-mail from us: ${check.triesLeft} ${check.triesLeft === 1 ? 'try' : 'tries'} left.`
        : 'That is not the code we sent, and it was the last try for this code. Ask for a new code.';
    case 'used':
      return 'This code has already been used: each code works once. Ask for a new code.';
    case 'expired':
      return `This code has expired: codes work for ${CODE_LIFETIME_MINUTES} minutes. Ask for a new code.`;
    case 'exhausted':
      return `This code has had ${CODE_TRIES} wrong tries and no longer works. Ask for a new code.`;
    case 'none':
      return 'There is no code waiting for this address. Ask for a new code.';
  }
}
