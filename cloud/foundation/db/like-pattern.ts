/**
 * Text a person typed, as the literal part of a `LIKE` pattern: `LIKE` reads `%`, `_` and `\` as patterns, and a
 * ref, a name or an address may hold them as text (docs/design.md sections 11.4 and 11.5).
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
