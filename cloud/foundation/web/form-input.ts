import { z } from 'zod';

/**
 * A posted form checked at the edge with zod (docs/design.md section 10.3): either its values, or every field's
 * first problem, keyed by the field's id on the page, so the page can list them at the top and beside each
 * field, as a person fixes them.
 */
export type FieldErrors = Record<string, string>;

export type FormResult<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

export function parseForm<T extends z.ZodType>(schema: T, body: unknown): FormResult<z.infer<T>> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? 'form');
    errors[field] ??= issue.message;
  }
  return { ok: false, errors };
}

/** A form field as text, whatever was posted under its name (a repeated field keeps its first value). */
export function textField(body: unknown, name: string): string {
  if (body === null || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** A field posted any number of times (checkboxes of one name), as its text values in the order posted. */
export function listField(body: unknown, name: string): string[] {
  if (body === null || typeof body !== 'object') return [];
  const value = (body as Record<string, unknown>)[name];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((each): each is string => typeof each === 'string');
}

/**
 * A text field of a form: a field missing from the post, or posted twice, is read as a person's form would
 * have sent it (empty, or its first value), so that the field's own rule says what is wrong with it.
 */
export function formText<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => {
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === 'string' ? first : '';
  }, schema);
}
