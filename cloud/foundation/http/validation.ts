import type { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';

/** Ids are checked against MAX_ID (shared/limits.ts) wherever a request names one. */
export { MAX_ID } from '../../../shared/limits.js';

/**
 * Validates a value at the edge; the first problem becomes 400 `invalid_field` naming the field (in the body's
 * own notation, `shape.windows[0].to`) and saying what it accepts. A nested field's message that names its
 * whole path already (shared/company-api/grant-shape.ts) is not prefixed with it again.
 */
export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? bodyPath(issue.path) : undefined;
  const named = issue.path.length > 1 && field !== undefined && issue.message.startsWith(field);
  const message = field && !named ? `${field}: ${issue.message}` : issue.message;
  throw new ApiError('invalid_field', { message, ...(field ? { field } : {}) });
}

/** A field's path as the body writes it: `shape.windows[0].to`. */
function bodyPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (name, part) =>
      typeof part === 'number' ? `${name}[${part}]` : name === '' ? String(part) : `${name}.${String(part)}`,
    '',
  );
}

/** Parses raw bytes as a JSON object, or throws `bad_json`. */
export function parseJsonObject(raw: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new ApiError('bad_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ApiError('bad_json');
  return value as Record<string, unknown>;
}
