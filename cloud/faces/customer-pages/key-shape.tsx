import type { VNode } from 'preact';
import { capitalised } from '../../foundation/web/readable-time.js';
import type { KeyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import { shapeWords } from '../../rules/grant-shapes/shape-words.js';

/**
 * A key's shape in words (docs/design.md section 3.1), without its end, which the lifetime says: "Mondays, 8:00
 * to 12:00 · from Monday 7 December 2026, 8:00 (Europe/Berlin) · 5 openings in all (2 used)". Nothing for a
 * key that opens at any hour, from its grant on, as often as needed.
 */
export function keyShapeLines(key: Pick<KeyOnBarrier, 'shape' | 'timeZone' | 'openingsUsed'>): string[] {
  return shapeWords({ ...key.shape, endsAt: null }, key.timeZone, {
    withZone: true,
    ...(key.openingsUsed !== null ? { used: key.openingsUsed } : {}),
  });
}

export function KeyShapeText(props: {
  shape: Pick<KeyOnBarrier, 'shape' | 'timeZone' | 'openingsUsed'>;
}): VNode | null {
  const lines = keyShapeLines(props.shape);
  if (lines.length === 0) return null;
  return (
    <ul class="shape">
      {lines.map((line) => (
        <li key={line}>{capitalised(line)}</li>
      ))}
    </ul>
  );
}
