import { type RawBuilder, sql } from 'kysely';
import { EVENT_KINDS, type EventKind } from '../../../shared/company-api/events.js';
import { type CompanyChangeContext, changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import { wakeEventDelivery } from './events-wake.js';

/**
 * The kinds of event a company's callback takes (docs/design.md section 6). Every kind unless the company chose
 * some; a test event (`ping`) always goes, since it is what a member sends to check the callback. An event of a
 * kind the callback does not take is kept and shown like any other, and streamed to `listen`, but never sent to
 * the callback (event-to-callback.sql says which go).
 */

/** The kinds a company may choose among: all but `ping`, which always goes. */
export const CHOOSABLE_KINDS: readonly EventKind[] = EVENT_KINDS.filter((kind) => kind !== 'ping');

/**
 * Whether an event goes to the callback (event-to-callback.sql, the one home of the rule), for a query over
 * `events` as `event` beside its company's `companies` row as `company`.
 */
export function sentToCallback(event: string, company: string): RawBuilder<boolean> {
  return sql<boolean>`event_to_callback(${sql.ref(`${event}.to_callback`)}, ${sql.ref(`${event}.type`)}, ${sql.ref(`${company}.callback_kinds`)})`;
}

/**
 * Sets the kinds the company's callback takes (null: every kind, kinds added later too; a list, those only, even
 * when it names every kind there is today), and passes over for good the events waiting that the callback will
 * not get: those the old kinds did not take and those the new ones do not. So what is waiting afterwards is what
 * the new kinds take, and taking a kind again later never sends events of it days late. A company change (the
 * pages read the company through its cache), whose transaction writes the events before the company's row, in
 * the order a delivery worker's turn writes them (./delivery-store.ts, recordTurn), so that the two never wait
 * for each other in a circle. Wakes the delivery workers, and returns how many waiting events were passed over.
 */
export async function saveCallbackKinds(
  ctx: CompanyChangeContext,
  companyId: number,
  kinds: readonly EventKind[] | null,
  by: ActingMember,
): Promise<number> {
  const chosen = kinds === null ? null : CHOOSABLE_KINDS.filter((kind) => kinds.includes(kind));
  return changeCompany(ctx, companyId, async ({ db: trx }) => {
    const passed = await sql`
      update events as event set to_callback = false
        from companies as company
       where company.id = ${companyId} and event.company_id = company.id
         and event.delivered_at is null and event.to_callback is null
         and not (${sentToCallback('event', 'company')}
                  and event_to_callback(event.to_callback, event.type, ${chosen}::text[]))`.execute(trx);
    await trx.updateTable('companies').set({ callback_kinds: chosen }).where('id', '=', companyId).execute();
    await wakeEventDelivery(trx);
    await recordMemberAction(trx, ctx.clock.now(), {
      companyId,
      by,
      name: 'callback-kinds',
      detail: chosen === null ? 'every kind' : chosen.join(', '),
    });
    return Number(passed.numAffectedRows ?? 0n);
  });
}
