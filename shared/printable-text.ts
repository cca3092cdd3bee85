/**
 * Text a company gives us that a customer reads: `actor` of `open` (a journal line) and `ref` of `request`
 * (cloud/README.md, "Printable text"). Refused, by Unicode category:
 * - Cc, control characters: a newline or a terminal escape would break or forge a journal line;
 * - Zl and Zp, U+2028 and U+2029: line and paragraph separators break a line as a newline does;
 * - Cf, format characters: invisible (U+200B zero-width space, U+FEFF, U+00AD soft hyphen, U+2060 word
 *   joiner, the tag characters that can hide ASCII), or reordering what is shown (U+202E and the other
 *   direction overrides, isolates and marks), so that two texts that look alike differ, or one reads as
 *   another;
 * - Cs, a surrogate on its own (JSON allows `"\ud800"`): not a character, it cannot be stored as UTF-8.
 * Allowed although they are Cf: U+200C zero-width non-joiner and U+200D zero-width joiner. Persian and the
 * Indic scripts need them to spell names correctly, and emoji sequences are built with the joiner; they
 * neither break a line nor reorder text, they only choose how neighbouring letters join.
 */
export const PRINTABLE_TEXT = /^(?:[\u200c\u200d]|[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}])*$/u;

/**
 * The rule as one whole-text pattern rather than a search for a bad character: a schema that checks it with
 * `.regex` carries it into its JSON Schema as `pattern` (an ECMA-262 pattern with Unicode property escapes,
 * as JSON Schema 2020-12 reads it), so the OpenAPI document states the very rule the cloud applies
 * (docs/design.md section 1.1).
 */
export function isPrintableText(text: string): boolean {
  return PRINTABLE_TEXT.test(text);
}

/** What a field that is not printable text is told (`invalid_field`), naming the field. */
export function notPrintableMessage(field: string): string {
  return `${field} must not hold control characters, line or paragraph separators, or invisible characters`;
}
