import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { readValue, type ScalarResult, type SqlType } from '../../foundation/db/function-result.js';
import { type KeyShape, storedWindows } from './stored-shape.js';

/** Why a key's shape does not let it open now (docs/design.md section 3.1), in the order they are checked. */
export const GRANT_SHAPE_REFUSALS = ['not_started', 'outside_hours', 'openings_used'] as const;
export type GrantShapeRefusal = (typeof GRANT_SHAPE_REFUSALS)[number];

function isRefusal(value: string): value is GrantShapeRefusal {
  return (GRANT_SHAPE_REFUSALS as readonly string[]).includes(value);
}

/**
 * What grant_shape_refusal returns (`returns text` in ./grant-shape-refusal.sql, the one place that says whether a
 * shape allows an opening), declared here once; a test compares it with the database's catalog.
 */
export const grantShapeRefusalResult = {
  function: 'grant_shape_refusal',
  returns: 'text',
} as const satisfies ScalarResult<SqlType>;

/**
 * grant_shape_refusal of a shape on a barrier in time zone `zone`, with `used` openings counted, at `now`:
 * for a page that says whether a key would open, in the very words of `open`.
 */
export async function grantShapeRefusal(
  db: Database,
  input: { shape: KeyShape; zone: string; used: number; now: Date },
): Promise<GrantShapeRefusal | null> {
  const { shape, zone, used, now } = input;
  const windows = shape.windows ? JSON.stringify(storedWindows(shape.windows)) : null;
  const result = await sql<{ refusal: unknown }>`
    select grant_shape_refusal(${shape.startsAt}::timestamptz, ${windows}::jsonb, ${zone}::text,
      ${shape.openings}::integer, ${used}::integer, ${now}::timestamptz) as refusal
  `.execute(db);
  const refusal = readValue(grantShapeRefusalResult, result.rows[0]?.refusal ?? null);
  if (refusal === null || isRefusal(refusal)) return refusal;
  throw new Error(`grant_shape_refusal answered ${refusal}, which is no refusal it declares`);
}
