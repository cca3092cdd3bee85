import { sql, type Transaction } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { DB } from '../../foundation/db/schema.js';
import { KEEP_NOTICES_MS } from '../outboxes/notice-outbox.js';
import { tellClosedAgain, tellLeftOpen } from './alert-recipients.js';
import type { RecipientRows } from './recipients.js';

/**
 * The household's record of a gate left open (docs/design.md section 10.7), `gate_alerts`: what its notices
 * "left open" and "closed again" tell. A row is raised in the transaction of the sweep that marks the gate
 * (cloud/rules/positions/gate-sweeps.ts), whose conditional update takes each gate once, so the household is
 * told once however many instances sweep; it names the opening that left the gate open only when one of the
 * household's keys made it (a controller's previous owner's keys stay theirs, section 10.5).
 */
export async function raiseGateAlerts(
  trx: Transaction<DB>,
  objectIds: readonly number[],
  now: Date,
): Promise<RecipientRows> {
  if (objectIds.length === 0) return { pushes: 0, mails: 0 };
  const { rows } = await sql<{ id: number }>`
    insert into gate_alerts (device_id, object_id, journal_id, open_since, left_open_at)
    select o.device_id, o.id,
           (select j.id from journal j
              join keys k on k.id = j.key_id
              join devices d on d.id = j.device_id
             where j.id = o.left_open_entry
               and (k.customer_id = d.customer_id
                    or exists (select 1 from barrier_members g
                                where g.device_id = d.id and g.customer_id = k.customer_id))),
           o.position_since, o.left_open_at
      from device_objects o
     where o.id in (${sql.join(objectIds)}) and o.left_open_at = ${now}::timestamptz
    on conflict (object_id, left_open_at) do nothing
    returning id`.execute(trx);
  return tellLeftOpen(
    trx,
    rows.map((row) => row.id),
    now,
  );
}

/**
 * Alerts whose gate is no longer marked left open are closed, and those told of them are told "closed again".
 * The mark is cleared by the position report of the close (cloud/rules/positions/apply-position-report.sql); this
 * runs after it, in the fan-out's transaction (./journal-fan-out.ts), which one instance holds at a time, rather
 * than in the report's statement: reports give way to openings and share PGlite's one thread with them (section
 * 7.5), and a database function is whichever the release started last defines (section 8.2). The close is told
 * at its time as the journal has it, or the gate's own when the entry was sealed or there is none. A gate whose
 * object went away ends its alert untold.
 */
export async function closeGateAlerts(trx: Transaction<DB>, now: Date): Promise<RecipientRows> {
  const { rows } = await sql<{ id: number; told: boolean }>`
    update gate_alerts a
       set closed_at = coalesce((select j.gate_closed_at from journal j where j.id = a.journal_id),
                                case when o.position = 'closed' then o.position_since end,
                                ${now}::timestamptz)
      from device_objects o
     where o.id = a.object_id and a.closed_at is null
       and (o.left_open_at is distinct from a.left_open_at or o.removed_at is not null)
    returning a.id, o.removed_at is null as told`.execute(trx);
  return tellClosedAgain(
    trx,
    rows.filter((row) => row.told).map((row) => row.id),
    now,
  );
}

/** Alerts closed a week ago go, and their notices, sent or not, with them: as the outboxes keep theirs. */
export async function purgeGateAlerts(ctx: CloudContext): Promise<number> {
  const old = new Date(ctx.clock.now().getTime() - KEEP_NOTICES_MS);
  const result = await ctx.db.deleteFrom('gate_alerts').where('closed_at', '<', old).executeTakeFirst();
  return Number(result.numDeletedRows);
}
