import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { sentToCallback } from './callback-kinds.js';

/**
 * Events a company without a callback address has waiting (docs/design.md section 6), of the kinds it takes:
 * kept about three days, and sent, oldest first, once an address is saved. A company saving its first address may not want days-old
 * openings replayed at a new receiver, so its area asks, and dropping them is part of the same save.
 */
export interface HeldEvents {
  count: number;
  /** When the oldest was written. */
  since: Date;
  /** The newest one's `seq`: a drop takes these and no event written after the page was shown. */
  upTo: string;
}

export async function heldEvents(
  ctx: Pick<CloudContext, 'db'>,
  companyId: number,
): Promise<HeldEvents | null> {
  const row = await ctx.db
    .selectFrom('events as event')
    .innerJoin('companies as company', 'company.id', 'event.company_id')
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      eb.fn.min('event.at').as('since'),
      eb.fn.max('event.seq').as('upTo'),
    ])
    .where('event.company_id', '=', companyId)
    .where('event.delivered_at', 'is', null)
    .where(sentToCallback('event', 'company'))
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  if (count === 0 || row.since === null || row.upTo === null) return null;
  return { count, since: new Date(row.since), upTo: String(row.upTo) };
}

/** Drops the company's undelivered events up to `upTo` (HeldEvents.upTo), inside the save's transaction. */
export async function dropHeldEvents(db: Database, companyId: number, upTo: string): Promise<number> {
  const dropped = await db
    .deleteFrom('events')
    .where('company_id', '=', companyId)
    .where('delivered_at', 'is', null)
    .where('seq', '<=', upTo)
    .executeTakeFirst();
  return Number(dropped.numDeletedRows);
}
