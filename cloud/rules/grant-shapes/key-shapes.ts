import { apiWindows, type KeyShape } from './stored-shape.js';

/** The columns of a `keys` row that hold its shape (migration 0012), its end among them. */
export interface KeyShapeColumns {
  starts_at: Date | null;
  expires_at: Date | null;
  windows: unknown;
  openings_allowed: number | null;
}

/** A key's shape as its row holds it (docs/design.md section 3.1). */
export function keyShapeOfRow(row: KeyShapeColumns): KeyShape {
  return {
    startsAt: row.starts_at,
    endsAt: row.expires_at,
    windows: row.windows === null || row.windows === undefined ? null : apiWindows(row.windows),
    openings: row.openings_allowed,
  };
}

/** Whether a shape limits anything beyond its end, which keys had before shapes. */
export function isShaped(shape: KeyShape): boolean {
  return shape.startsAt !== null || shape.windows !== null || shape.openings !== null;
}
