import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { isPrintableText } from '../../../shared/printable-text.js';
import { formText, parseForm } from '../../foundation/web/form-input.js';
import { MAX_DISPLAY_NAME_LENGTH } from '../../rules/customers/accounts.js';
import { MAX_PASSKEY_NAME_LENGTH } from '../../rules/passkeys/passkeys.js';
import { MAX_SUBSCRIPTION_NAME_LENGTH } from '../../rules/push-subscriptions/subscriptions.js';
import { CODE_DIGITS } from '../../rules/sign-in-codes/codes.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';

/**
 * What the account pages accept, with the sentence a person reads next to the field when it is wrong
 * (docs/design.md section 10.2). Names are printable text (docs/design.md section 1), like every text shown
 * back to a person. A form field posted twice or not at all is read as a form would send it (form-input.ts).
 */
const printableName = (what: string, max: number) =>
  formText(
    z
      .string()
      .trim()
      .min(1, `Enter ${what}`)
      .max(max, `Enter ${what} of at most ${max} characters`)
      .refine(isPrintableText, 'Use letters, digits and punctuation only, without invisible characters'),
  );

export const displayName = printableName('your name', MAX_DISPLAY_NAME_LENGTH);
export const passkeyName = printableName('a name for the passkey', MAX_PASSKEY_NAME_LENGTH);
export const subscriptionName = printableName('a name for the browser', MAX_SUBSCRIPTION_NAME_LENGTH);
export const emailField = formText(emailAddress);

/** Spaces and dashes a person may type between the digits are dropped. */
export const typedCode = formText(
  z
    .string()
    .transform((text) => text.replace(/[\s-]/g, ''))
    .pipe(
      z
        .string()
        .regex(new RegExp(`^\\d{${CODE_DIGITS}}$`), `Enter the ${CODE_DIGITS}-digit code from the e-mail`),
    ),
);

/** `next` is checked by safeNext where it is used; here it only has to be short text. */
export const nextPath = z.string().max(2048).optional();

/**
 * A JSON body from the pages' script: its first problem is 400 `invalid_field`, naming the field and saying
 * the sentence a form would show beside it.
 */
export function readJson<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const read = parseForm(schema, body);
  if (read.ok) return read.value;
  const [field, message] = Object.entries(read.errors)[0]!;
  throw new ApiError('invalid_field', { field, message });
}
