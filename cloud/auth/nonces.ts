import type { CloudContext } from '../context.js';

/** Nonces are kept twice the timestamp tolerance, then purged: older ones are refused as stale anyway. */
export const NONCE_RETENTION_SECONDS = 600;

/**
 * Records a nonce for a company; false when it was seen before. The primary key makes this atomic across
 * every cloud instance on the same database.
 */
export async function consumeNonce(ctx: CloudContext, companyId: number, nonce: string): Promise<boolean> {
  const inserted = await ctx.db
    .insertInto('nonces')
    .values({ company_id: companyId, nonce: nonce.toLowerCase(), seen_at: ctx.clock.now() })
    .onConflict((oc) => oc.columns(['company_id', 'nonce']).doNothing())
    .executeTakeFirst();
  return inserted.numInsertedOrUpdatedRows === 1n;
}

export async function purgeNonces(ctx: CloudContext): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - NONCE_RETENTION_SECONDS * 1000);
  const result = await ctx.db.deleteFrom('nonces').where('seen_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
