import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { jsonb } from '../../foundation/db/database.js';
import type { DB } from '../../foundation/db/schema.js';

/**
 * `Idempotency-Key` (docs/design.md section 3): the same key with the same body returns the first answer
 * again for 24 hours; the same key with another body is refused. Keys are per company and per action.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export interface StoredAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface IdempotencyClaim {
  companyId: number;
  action: string;
  key: string;
  bodyHash: string;
  /** `open`: the command the call sends, so that the claim can be settled if this instance dies. */
  commandId?: string;
}

/** The header's form: 1..255 visible ASCII characters (also the OpenAPI document's, cloud/faces/api-contract/). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Reads the header: undefined when absent; 1..255 visible ASCII characters otherwise. */
export function readIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new ApiError('invalid_field', {
      field: 'Idempotency-Key',
      message: 'Idempotency-Key must be 1..255 visible ASCII characters.',
    });
  }
  return value;
}

export function hashBody(raw: Uint8Array): string {
  return createHash('sha256').update(raw).digest('hex');
}

/**
 * Claims the key inside `trx`. Returns the stored answer when the call was made before, or null when this
 * call is the first and must store its answer with `storeAnswer` before the transaction commits. A second
 * call racing the first waits on the row and then sees the stored answer.
 */
export async function claimIdempotencyKey(
  ctx: CloudContext,
  trx: Transaction<DB>,
  claim: IdempotencyClaim,
): Promise<StoredAnswer | null> {
  const now = ctx.clock.now();
  const where = { company_id: claim.companyId, action: claim.action, key: claim.key };
  await trx
    .deleteFrom('idempotency')
    .where('company_id', '=', where.company_id)
    .where('action', '=', where.action)
    .where('key', '=', where.key)
    .where('created_at', '<=', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS))
    .execute();
  const inserted = await trx
    .insertInto('idempotency')
    .values({ ...where, body_hash: claim.bodyHash, created_at: now, command_id: claim.commandId ?? null })
    .onConflict((oc) => oc.columns(['company_id', 'action', 'key']).doNothing())
    .executeTakeFirst();
  if (inserted.numInsertedOrUpdatedRows === 1n) return null;
  const existing = await trx
    .selectFrom('idempotency')
    .selectAll()
    .where('company_id', '=', where.company_id)
    .where('action', '=', where.action)
    .where('key', '=', where.key)
    .executeTakeFirstOrThrow();
  if (existing.body_hash !== claim.bodyHash) throw new ApiError('idempotency_conflict');
  if (existing.status === null || existing.response === null) throw new ApiError('idempotency_in_progress');
  return { status: existing.status, body: existing.response as Record<string, unknown> };
}

/** Which claim: its company, action and key. */
export type ClaimKey = Pick<IdempotencyClaim, 'companyId' | 'action' | 'key'>;

/** Stores the first answer of a claim; returns whether it did (an answer stored already stays). */
export async function storeAnswer(db: Kysely<DB>, claim: ClaimKey, answer: StoredAnswer): Promise<boolean> {
  const result = await db
    .updateTable('idempotency')
    .set({ status: answer.status, response: jsonb(answer.body) })
    .where('company_id', '=', claim.companyId)
    .where('action', '=', claim.action)
    .where('key', '=', claim.key)
    .where('status', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Drops a claim that has no answer, so that a retry with its key runs afresh; returns whether it did. */
export async function releaseClaim(db: Kysely<DB>, claim: ClaimKey): Promise<boolean> {
  const result = await db
    .deleteFrom('idempotency')
    .where('company_id', '=', claim.companyId)
    .where('action', '=', claim.action)
    .where('key', '=', claim.key)
    .where('status', 'is', null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function purgeIdempotencyKeys(ctx: CloudContext): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS);
  const result = await ctx.db.deleteFrom('idempotency').where('created_at', '<=', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
