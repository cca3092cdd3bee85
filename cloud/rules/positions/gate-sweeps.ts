import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { stepTime } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { raiseGateAlerts } from '../push-notifications/gate-alerts.js';
import { steppedEntry } from './gate-events.js';

/**
 * What the cloud concludes from a position not reported (docs/design.md section 5.2): a gate that did not move
 * after its relay fired, and a gate left open past its barrier's limit. Each sweep is one transaction whose
 * conditional update takes only rows not marked yet, so instances sweeping at once never mark one twice nor
 * send its event twice: a row another instance marked meanwhile no longer matches when the update reaches it.
 * Run by a periodic job on the cloud's clock (cloud/jobs/background-jobs.ts).
 */

/** Both sweeps; how many entries and objects they marked. */
export async function sweepGates(ctx: CloudContext): Promise<{ notMoved: number; leftOpen: number }> {
  return { notMoved: await sweepNotMoved(ctx), leftOpen: await sweepLeftOpen(ctx) };
}

/**
 * Openings whose relay fired more than the barrier's `move_timeout_s` ago on an object with a sensor, and whose
 * gate was not seen open: "relay fired, gate did not move", with `open.gate_not_moved`. An opening of a gate that
 * was already open when the relay fired is left alone: there was no movement to see; so is one after which the
 * gate closed, which it could only do from open. Only the last 24 hours:
 * an opening older than that is sealed as it is (docs/design.md section 5.3).
 */
export async function sweepNotMoved(ctx: CloudContext): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number; limit_s: number }>`
      update journal set gate_not_moved_at = ${now}::timestamptz
        from device_objects o, devices d
       where o.id = journal.object_id and d.id = journal.device_id and o.has_sensor
         and journal.outcome = 'opened' and journal.chain_seq is null
         and journal.gate_opened_at is null and journal.gate_not_moved_at is null
         and journal.acked_at < ${now}::timestamptz - make_interval(secs => d.move_timeout_s)
         and journal.acked_at > ${now}::timestamptz - interval '24 hours'
         and not coalesce(o.position = 'open' and o.position_since <= journal.acked_at, false)
         -- Closed since the relay fired: the gate was open then and this opening closed it (a toggle) or
         -- found it closing (an auto-close timer); either way it moved.
         and not coalesce(o.position = 'closed' and o.position_since > journal.acked_at, false)
      returning journal.id, d.move_timeout_s as limit_s`.execute(trx);
    for (const row of rows) {
      const entry = await steppedEntry(trx, row.id);
      if (!entry?.ackedAt) continue;
      await enqueueEvent(trx, {
        companyId: entry.companyId,
        type: 'open.gate_not_moved',
        at: now,
        data: {
          ...entry.base,
          relay_at: stepTime(entry.ackedAt),
          not_moved_at: stepTime(now),
          limit_s: row.limit_s,
        },
      });
    }
    if (rows.length > 0) ctx.log.info({ entries: rows.length }, 'openings marked: gate did not move');
    return rows.length;
  });
}

/**
 * Objects open for longer than their barrier's `left_open_limit_s`: marked left open (shown to the customer),
 * with the opening that left them open, if one did, and `gate.left_open` to its company. A gate opened by other
 * means (a remote control, a hand) has no such opening and no company to tell.
 */
export async function sweepLeftOpen(ctx: CloudContext): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number; entry: number | null; limit_s: number }>`
      update device_objects o
         set left_open_at = ${now}::timestamptz,
             left_open_entry = (
               select j.id from journal j
                where j.object_id = o.id and j.chain_seq is null
                  and j.gate_opened_at is not null and j.gate_closed_at is null
                order by j.id desc limit 1)
        from devices d
       where d.id = o.device_id and o.removed_at is null
         and o.position = 'open' and o.left_open_at is null
         and o.position_since < ${now}::timestamptz - make_interval(secs => d.left_open_limit_s)
      returning o.id, o.left_open_entry as entry, d.left_open_limit_s as limit_s`.execute(trx);
    // The household is told in the same transaction, so once, as the company is (docs/design.md section 10.7).
    await raiseGateAlerts(
      trx,
      rows.map((row) => row.id),
      now,
    );
    for (const row of rows) {
      if (row.entry === null) continue;
      await trx
        .updateTable('journal')
        .set({ left_open_at: now })
        .where('id', '=', row.entry)
        .where('chain_seq', 'is', null)
        .execute();
      const entry = await steppedEntry(trx, row.entry);
      if (!entry?.openedAt) continue;
      await enqueueEvent(trx, {
        companyId: entry.companyId,
        type: 'gate.left_open',
        at: now,
        data: {
          ...entry.base,
          opened_at: stepTime(entry.openedAt),
          left_open_at: stepTime(now),
          limit_s: row.limit_s,
        },
      });
    }
    if (rows.length > 0) ctx.log.info({ objects: rows.length }, 'gates marked: left open');
    return rows.length;
  });
}
