import { type SqlBool, sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { keyExpired, requestExpired } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { accessKeyLapse } from './key-lifetime.js';

/**
 * Records lapsed lifetimes. Readers already see the right state (effectiveState); this sweep makes the
 * move permanent and emits its event, once, whichever cloud instance runs it first.
 */
export async function sweepExpired(ctx: CloudContext): Promise<{ requests: number; keys: number }> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const requests = await trx
      .updateTable('requests')
      .set((eb) => ({ state: 'expired', expired_at: eb.ref('expires_at') }))
      .where('state', 'in', ['new', 'claimed'])
      .where('expires_at', '<=', now)
      .returning(['company_id', 'code', 'ref', 'expires_at'])
      .execute();
    for (const request of requests) {
      await enqueueEvent(trx, {
        companyId: request.company_id,
        type: 'request.expired',
        at: now,
        data: requestExpired(request),
      });
    }
    const keys = await trx
      .updateTable('keys')
      .set({ expiry_recorded_at: now })
      .where(sql<SqlBool>`${accessKeyLapse(now)} = 'expired'`)
      .where('expiry_recorded_at', 'is', null)
      .returning(['id', 'company_id', 'request_id', 'expires_at'])
      .execute();
    for (const key of keys) {
      const request = await trx
        .selectFrom('requests')
        .select(['code', 'ref', 'state'])
        .where('id', '=', key.request_id)
        .executeTakeFirstOrThrow();
      await enqueueEvent(trx, {
        companyId: key.company_id,
        type: 'key.expired',
        at: now,
        data: keyExpired(request, { id: key.id, expires_at: key.expires_at! }),
      });
    }
    return { requests: requests.length, keys: keys.length };
  });
}
