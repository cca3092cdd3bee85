import { z } from 'zod';
import { isPrintableText } from '../../../shared/printable-text.js';
import { MAX_ID } from '../../foundation/http/validation.js';

/**
 * The query of a company's listing pages (docs/design.md section 11.4): filters from a GET form and the page's
 * `before`. A value that makes no sense (a state that does not exist, a negative page) is dropped rather than
 * refused, so a hand-edited address still shows a page; an empty field is no filter.
 */
const blankIsNone = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

export const optionalText = (max: number) =>
  z.preprocess(blankIsNone, z.string().trim().max(max).refine(isPrintableText).optional().catch(undefined));

export const optionalBefore = z.preprocess(
  blankIsNone,
  z.coerce.number().int().positive().max(MAX_ID).optional().catch(undefined),
);

export function optionalChoice<T extends string>(choices: readonly [T, ...T[]]) {
  return z.preprocess(blankIsNone, z.enum(choices).optional().catch(undefined));
}

/** A listing's URL with its filters, for links that keep them. */
export function listHref(path: string, filters: object): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters))
    if (value !== undefined) query.set(name, String(value));
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}
