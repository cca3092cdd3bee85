import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';

/**
 * The rows of a batch that their push services took, written together once the batch is over
 * (docs/design.md section 10.6): sent, and their subscriptions' last delivery, in one transaction of two
 * statements rather than one transaction per push, which was most of a push's database time. A worker that dies
 * before writing them leaves the rows leased: they are sent again once the lease ends, at least once as ever.
 */
export async function recordSentPushes(
  ctx: CloudContext,
  pushes: readonly { id: string; subscription_id: number }[],
): Promise<void> {
  if (pushes.length === 0) return;
  const now = ctx.clock.now();
  const ids = pushes.map((push) => push.id);
  const subscriptions = [...new Set(pushes.map((push) => push.subscription_id))];
  await ctx.db.transaction().execute(async (trx) => {
    await sql`update push_outbox set sent_at = ${now}, locked_until = null, attempts = attempts + 1
               where id in (${sql.join(ids)})`.execute(trx);
    await trx
      .updateTable('push_subscriptions')
      .set({ last_delivered_at: now })
      .where('id', 'in', subscriptions)
      .execute();
  });
}
