import { sql, type Transaction } from 'kysely';
import type { DB } from '../../foundation/db/schema.js';

/**
 * What a barrier's life does to its household (docs/design.md sections 9.1 and 9.2), called inside the
 * transaction of the act, so a barrier is never left half shared. The household is the owner's: when the barrier
 * leaves the owner (removed, retired, paired by someone else) it ends with them; when the controller is replaced,
 * it moves to the new one with the barrier's other rows.
 */

/**
 * Every membership ends, and every invitation still waiting is withdrawn, so its link says so. What each person
 * chose to be told of it goes too (docs/design.md section 10.7): a next owner starts from every opening.
 */
export async function endHousehold(
  trx: Transaction<DB>,
  input: { deviceId: string; now: Date },
): Promise<void> {
  await trx.deleteFrom('barrier_members').where('device_id', '=', input.deviceId).execute();
  await trx.deleteFrom('notification_choices').where('device_id', '=', input.deviceId).execute();
  await trx
    .updateTable('barrier_invitations')
    .set({ withdrawn_at: input.now })
    .where('device_id', '=', input.deviceId)
    .where('accepted_at', 'is', null)
    .where('withdrawn_at', 'is', null)
    .execute();
}

/**
 * A member who leaves or is removed takes with them what they chose to be told of the barrier, and whatever
 * notification of its openings is still waiting for them, by push or e-mail (docs/design.md section 10.7): from
 * then on they hear nothing of it, as they see nothing of it.
 */
export async function endMembership(
  trx: Transaction<DB>,
  input: { deviceId: string; customerId: number },
): Promise<void> {
  await trx
    .deleteFrom('notification_choices')
    .where('device_id', '=', input.deviceId)
    .where('customer_id', '=', input.customerId)
    .execute();
  // Every kind of notice (docs/design.md section 10.7): of its entries, its gates left open, its key history.
  const ofBarrier = sql`(o.journal_id in (select id from journal where device_id = ${input.deviceId})
                         or o.gate_alert_id in (select id from gate_alerts where device_id = ${input.deviceId})
                         or o.history_id in (select id from access_history where device_id = ${input.deviceId}))`;
  await sql`
    delete from opening_mail_outbox o
     where o.customer_id = ${input.customerId} and o.sent_at is null and ${ofBarrier}`.execute(trx);
  await sql`
    delete from push_outbox o
     where o.sent_at is null and ${ofBarrier}
       and o.subscription_id in (select id from push_subscriptions where customer_id = ${input.customerId})`.execute(
    trx,
  );
}

/**
 * A record deleted at retirement takes its invitations' rows with it (they refer to it); a retired record that is
 * kept keeps them, ended, so their links still say "withdrawn".
 */
export async function forgetInvitations(trx: Transaction<DB>, deviceId: string): Promise<void> {
  await trx.deleteFrom('barrier_invitations').where('device_id', '=', deviceId).execute();
}

/**
 * A replacement: the members, the invitations, waiting or not, and what each chose to be told follow the barrier
 * to its new controller.
 */
export async function moveHousehold(trx: Transaction<DB>, move: { from: string; to: string }): Promise<void> {
  // The new controller came unpaired, so its household is empty; clearing it keeps the move from colliding.
  await trx.deleteFrom('barrier_members').where('device_id', '=', move.to).execute();
  await trx.deleteFrom('notification_choices').where('device_id', '=', move.to).execute();
  await trx
    .updateTable('notification_choices')
    .set({ device_id: move.to })
    .where('device_id', '=', move.from)
    .execute();
  await trx
    .updateTable('barrier_members')
    .set({ device_id: move.to })
    .where('device_id', '=', move.from)
    .execute();
  await trx
    .updateTable('barrier_invitations')
    .set({ device_id: move.to })
    .where('device_id', '=', move.from)
    .execute();
}
