import { z } from 'zod';

/**
 * An e-mail address as the accounts keep it (docs/design.md section 10.2): trimmed and lower-cased, so that
 * `Anna@Example.com ` and `anna@example.com` are one address for codes, limits and accounts alike; at most 254
 * characters, the longest address SMTP can carry (RFC 5321 section 4.5.3.1).
 */
export const MAX_EMAIL_LENGTH = 254;

export const emailAddress = z
  .string('Enter your e-mail address')
  .trim()
  .toLowerCase()
  .min(1, 'Enter your e-mail address')
  .max(MAX_EMAIL_LENGTH, `Enter an e-mail address of at most ${MAX_EMAIL_LENGTH} characters`)
  .pipe(z.email('Enter an e-mail address like name@example.com'));

/** The part before the @, for a name to greet someone by until they choose one. */
export function localPart(email: string): string {
  return email.slice(0, email.lastIndexOf('@'));
}
