import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { MAX_DISPLAY_NAME_LENGTH } from '../customers/accounts.js';
import { CODE_DIGITS } from '../email-codes/codes.js';
import { isPrintableText } from '../http/printable-text.js';
import { MAX_PASSKEY_NAME_LENGTH } from '../passkeys/passkeys.js';

/**
 * What the account pages accept, with the sentence a person reads next to the field when it is wrong
 * (docs/design.md section 10.2). Names are printable text (docs/design.md section 1), like every text shown
 * back to a person.
 */
const printableName = (what: string, max: number) =>
  z
    .string('Enter a name')
    .trim()
    .min(1, `Enter ${what}`)
    .max(max, `Enter ${what} of at most ${max} characters`)
    .refine(isPrintableText, 'Use letters, digits and punctuation only, without invisible characters');

export const displayName = printableName('your name', MAX_DISPLAY_NAME_LENGTH);
export const passkeyName = printableName('a name for the passkey', MAX_PASSKEY_NAME_LENGTH);

/** Spaces and dashes a person may type between the digits are dropped. */
export const typedCode = z
  .string('Enter the code')
  .transform((text) => text.replace(/[\s-]/g, ''))
  .pipe(
    z
      .string()
      .regex(new RegExp(`^\\d{${CODE_DIGITS}}$`), `Enter the ${CODE_DIGITS}-digit code from the e-mail`),
  );

/** `next` is checked by safeNext where it is used; here it only has to be short text. */
export const nextPath = z.string().max(2048).optional();

/** A form's fields, or the first problem of each field by name. */
export type FormRead<T> = { ok: true; data: T } | { ok: false; errors: Record<string, string> };

export function readForm<T extends z.ZodType>(schema: T, body: unknown): FormRead<z.infer<T>> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return { ok: true, data: result.data };
  const errors: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? 'form');
    errors[field] ??= issue.message;
  }
  return { ok: false, errors };
}

/**
 * A JSON body from the pages' script: its first problem is 400 `invalid_field`, naming the field and saying
 * the sentence a form would show beside it.
 */
export function readJson<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const read = readForm(schema, body);
  if (read.ok) return read.data;
  const [field, message] = Object.entries(read.errors)[0]!;
  throw new ApiError('invalid_field', { field, message });
}
