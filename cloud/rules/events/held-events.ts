import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * Events a company without an endpoint has waiting (docs/design.md sections 6 and 6.2): written while it had no
 * callback address, or left undelivered by the one it removed, and not passed over by a change of kinds. Kept
 * about three days, and sent, oldest first, to the first endpoint it adds. A company adding its first endpoint
 * may not want days-old openings replayed at a new receiver, so its area asks, and dropping them is part of the
 * same save. An endpoint added beside another starts with the events written after it.
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
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      eb.fn.min('event.at').as('since'),
      eb.fn.max('event.seq').as('upTo'),
    ])
    .where('event.company_id', '=', companyId)
    .where(held)
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  if (count === 0 || row.since === null || row.upTo === null) return null;
  return { count, since: new Date(row.since), upTo: String(row.upTo) };
}

/** Drops the company's held events up to `upTo` (HeldEvents.upTo), inside the save's transaction. */
export async function dropHeldEvents(db: Database, companyId: number, upTo: string): Promise<number> {
  const dropped = await db
    .deleteFrom('events as event')
    .where('event.company_id', '=', companyId)
    .where(held)
    .where('event.seq', '<=', upTo)
    .executeTakeFirst();
  return Number(dropped.numDeletedRows);
}

/** Gives the company's held events a place with its first endpoint, inside the transaction that adds it. */
export async function sendHeldEvents(db: Database, companyId: number, endpointId: number): Promise<void> {
  await db
    .insertInto('endpoint_events')
    .columns(['endpoint_id', 'event_id', 'seq'])
    .expression(
      db
        .selectFrom('events as event')
        .select([sql<number>`${endpointId}::integer`.as('endpoint_id'), 'event.id', 'event.seq'])
        .where('event.company_id', '=', companyId)
        .where(held),
    )
    .execute();
}

/**
 * Held: delivered to no endpoint yet (`events.delivered_at` says whether any took it), not passed over by a
 * change of kinds, and with no endpoint waiting to send it: asked only while the company has no endpoint.
 */
const held = sql<boolean>`event.delivered_at is null and event.to_callback is not false
  and not exists (select 1 from endpoint_events as place where place.event_id = event.id)`;
