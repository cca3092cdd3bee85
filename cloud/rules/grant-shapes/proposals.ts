import { grantShapeSchema } from '../../../shared/company-api/grant-shape.js';
import type { Database } from '../../foundation/db/database.js';
import { type KeyShape, keyShapeOf } from './stored-shape.js';

/**
 * What a company asked for in `request` (docs/design.md section 3.1), kept on the request as it sent it
 * (`requests.proposed_shape`), in the cloud's form; null when it asked for nothing. A customer grants that or
 * less; more only when they say so.
 */
export function proposalOf(stored: unknown): KeyShape | null {
  if (stored === null || stored === undefined) return null;
  return keyShapeOf(grantShapeSchema.parse(typeof stored === 'string' ? JSON.parse(stored) : stored));
}

/** The proposal of the request a key was granted on. */
export async function keyProposal(db: Database, keyId: number): Promise<KeyShape | null> {
  const row = await db
    .selectFrom('keys')
    .innerJoin('requests', 'requests.id', 'keys.request_id')
    .select('requests.proposed_shape')
    .where('keys.id', '=', keyId)
    .executeTakeFirst();
  return proposalOf(row?.proposed_shape);
}
