import { sql } from 'kysely';
import { EVENT_KINDS, type EventKind } from '../../../shared/company-api/events.js';
import { type CompanyChangeContext, changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import { type EndpointRef, mirrorFirstEndpoint } from './endpoints.js';

/**
 * The kinds of event each endpoint takes (docs/design.md sections 6 and 6.2). Every kind unless the company chose
 * some; a test event (`ping`) always goes, since it is what a member sends to check the endpoint. An event of a
 * kind no endpoint takes is kept and shown like any other, and streamed to `listen`, but never sent
 * (event-to-callback.sql says which go, and events-to-endpoints.sql applies it as each event is written).
 */

/** The kinds a company may choose among: all but `ping`, which always goes. */
export const CHOOSABLE_KINDS: readonly EventKind[] = EVENT_KINDS.filter((kind) => kind !== 'ping');

/**
 * Sets the kinds an endpoint takes (null: every kind, kinds added later too; a list, those only, even when it
 * names every kind there is today), and passes over for good the events waiting that it will not get: its places
 * in events the new kinds do not take, unless a member asked for the event by name. Events written before that
 * only the new kinds take have no place with it, and get none: so what waits afterwards is what the new kinds
 * take, and taking a kind again later never sends events of it days late. An event passed over by every endpoint
 * is marked so (`to_callback` false), and is not held for a later first endpoint either (./held-events.ts). A
 * company change, which locks the company's row first, so that an event written meanwhile is given its places
 * with the kinds as saved (./endpoints.ts); it writes the events' places before the endpoint's row, in the order
 * a delivery worker's turn writes them (./delivery-store.ts, recordTurn), so that the two never wait for each
 * other in a circle. Returns how many waiting events were passed over, or null when the company has no such
 * endpoint.
 */
export async function saveCallbackKinds(
  ctx: CompanyChangeContext,
  endpoint: EndpointRef,
  kinds: readonly EventKind[] | null,
  by: ActingMember,
): Promise<number | null> {
  const chosen = kinds === null ? null : CHOOSABLE_KINDS.filter((kind) => kinds.includes(kind));
  const { companyId, endpointId } = endpoint;
  return changeCompany(ctx, companyId, async ({ db: trx }) => {
    await trx.selectFrom('companies').select('id').where('id', '=', companyId).forUpdate().execute();
    const found = await trx
      .selectFrom('endpoints')
      .select(['url'])
      .where('id', '=', endpointId)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    if (!found) return null;
    const passed = await sql<{ event_id: string }>`
      delete from endpoint_events as place
       using events as event
       where place.endpoint_id = ${endpointId} and event.id = place.event_id
         and place.delivered_at is null and not place.asked
         and not event_to_callback(null, event.type, ${chosen}::text[])
      returning place.event_id`.execute(trx);
    const passedIds = passed.rows.map((row) => row.event_id);
    if (passedIds.length > 0) {
      await sql`
        update events as event set to_callback = false
         where event.id in (${sql.join(passedIds)}) and event.delivered_at is null
           and not exists (select 1 from endpoint_events as place where place.event_id = event.id)`.execute(
        trx,
      );
    }
    await trx.updateTable('endpoints').set({ kinds: chosen }).where('id', '=', endpointId).execute();
    await mirrorFirstEndpoint(trx, companyId);
    await recordMemberAction(trx, ctx.clock.now(), {
      companyId,
      by,
      name: 'callback-kinds',
      detail: `${chosen === null ? 'every kind' : chosen.join(', ')}, at ${found.url}`,
    });
    return passedIds.length;
  });
}
