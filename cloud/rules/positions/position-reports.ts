import { sql, type Transaction } from 'kysely';
import type { PositionReport } from '../../../shared/protocol/positions.js';
import type { CloudContext } from '../../foundation/context.js';
import { jsonb } from '../../foundation/db/database.js';
import type { DB } from '../../foundation/db/schema.js';
import { secondsBetween, stepTime } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { steppedEntry } from './gate-events.js';

/**
 * A controller's signed position report applied to its object, and attached to the opening it completes
 * (docs/design.md sections 5.2 and 7.5). Its signature and its device were checked before it came here.
 */

/** What became of a report: counted in `gatelink_position_reports_total{result}` (docs/design.md section 8.1). */
export type PositionResult = 'applied' | 'repeat' | 'stale' | 'future' | 'unknown_object';

/**
 * How far ahead of the cloud's clock a report's `changed_at` may be. A report from further ahead is dropped: as
 * the newest, it would make every later true report of the object stale until that time came.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/**
 * Applies a report only if newer than the object's latest report (a later `changed_at`): an equal one is a
 * repeat (the report of the current position on each connect), an older one is stale (replayed or reordered).
 * A newer report of the position the object already has changes nothing but that mark: a restarted controller
 * dates its first reading at its start, and the gate has stood where it stands since before that, so the
 * customer's "open since" and the left-open alert keep counting from the change the cloud saw.
 * The position, the journal step and its event are written in one transaction; the object's row is locked for
 * it, so two instances applying reports of one object take turns and the newer one wins. The lock is `no key
 * update`: an opening's journal insert takes `key share` on the object (its foreign key), and must never wait
 * for a report.
 */
export async function applyPositionReport(
  ctx: CloudContext,
  report: PositionReport,
): Promise<PositionResult> {
  const now = ctx.clock.now();
  if (report.changed_at > now.getTime() + FUTURE_TOLERANCE_MS) return 'future';
  const changedAt = new Date(report.changed_at);
  return ctx.db.transaction().execute(async (trx) => {
    const object = await trx
      .selectFrom('device_objects')
      .select(['id', 'position', 'position_report', 'left_open_at', 'left_open_entry'])
      .where('device_id', '=', report.device_id)
      .where('local_id', '=', report.object)
      .where('removed_at', 'is', null)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!object) return 'unknown_object';
    const latest = latestChange(object.position_report);
    if (latest !== null && report.changed_at === latest) return 'repeat';
    if (latest !== null && report.changed_at < latest) return 'stale';
    if (object.position === report.position) {
      await trx
        .updateTable('device_objects')
        .set({ position_report: jsonb(report) })
        .where('id', '=', object.id)
        .execute();
      return 'repeat';
    }
    await trx
      .updateTable('device_objects')
      .set({ position: report.position, position_since: changedAt, position_report: jsonb(report) })
      .where('id', '=', object.id)
      .execute();
    if (report.position === 'open') await attachOpened(trx, object.id, report, now);
    else await attachClosed(trx, object, report, now);
    return 'applied';
  });
}

/** The `changed_at` of the object's latest report: the mark every later report must pass. */
function latestChange(report: unknown): number | null {
  const changedAt = (report as { changed_at?: unknown } | null)?.changed_at;
  return typeof changedAt === 'number' ? changedAt : null;
}

/**
 * `open`: the newest opening of the object that fired its relay, has no step after it yet and is not sealed,
 * whose command reached the controller before the change and whose relay fired at most the barrier's
 * `move_timeout_s` before it. Entries acknowledged by an earlier release carry no ack: its firing time bounds
 * them from below instead.
 */
async function attachOpened(trx: Transaction<DB>, objectId: number, report: PositionReport, now: Date) {
  const changedAt = new Date(report.changed_at);
  const { rows } = await sql<{ id: number }>`
    update journal set gate_opened_at = ${changedAt}::timestamptz, gate_reports = ${withReport(report)}
     where journal.id = (
             select j.id from journal j join devices d on d.id = j.device_id
              where j.object_id = ${objectId} and j.outcome = 'opened' and j.chain_seq is null
                and j.gate_opened_at is null and j.gate_not_moved_at is null
                and coalesce(to_timestamp((j.ack->>'received_at')::double precision / 1000), j.acked_at)
                    <= ${changedAt}::timestamptz
                and j.acked_at + make_interval(secs => d.move_timeout_s) >= ${changedAt}::timestamptz
              order by j.id desc limit 1)
       and journal.chain_seq is null and journal.gate_opened_at is null and journal.gate_not_moved_at is null
    returning journal.id`.execute(trx);
  const entry = rows[0] && (await steppedEntry(trx, rows[0].id));
  if (!entry?.ackedAt) return;
  await enqueueEvent(trx, {
    companyId: entry.companyId,
    type: 'open.gate_opened',
    at: now,
    data: { ...entry.base, relay_at: stepTime(entry.ackedAt), opened_at: stepTime(changedAt) },
  });
}

/**
 * `closed`: the newest unsealed opening of the object seen open and not closed yet. A gate that was left open
 * has its alert cleared, and the company whose opening left it open is told it closed.
 */
async function attachClosed(
  trx: Transaction<DB>,
  object: { id: number; left_open_at: Date | null; left_open_entry: number | null },
  report: PositionReport,
  now: Date,
) {
  const closedAt = new Date(report.changed_at);
  const { rows } = await sql<{ id: number }>`
    update journal set gate_closed_at = ${closedAt}::timestamptz, gate_reports = ${withReport(report)}
     where journal.id = (
             select j.id from journal j
              where j.object_id = ${object.id} and j.chain_seq is null
                and j.gate_opened_at is not null and j.gate_closed_at is null
              order by j.id desc limit 1)
       and journal.chain_seq is null and journal.gate_closed_at is null
    returning journal.id`.execute(trx);
  const entry = rows[0] && (await steppedEntry(trx, rows[0].id));
  if (entry?.ackedAt && entry.openedAt) {
    await enqueueEvent(trx, {
      companyId: entry.companyId,
      type: 'open.gate_closed',
      at: now,
      data: {
        ...entry.base,
        relay_at: stepTime(entry.ackedAt),
        opened_at: stepTime(entry.openedAt),
        closed_at: stepTime(closedAt),
        open_for_s: secondsBetween(entry.openedAt, closedAt),
      },
    });
  }
  if (object.left_open_at)
    await clearLeftOpen(trx, { ...object, left_open_at: object.left_open_at }, closedAt, now);
}

/** The alert ends; `gate.closed` goes to the company whose opening left the gate open, when one did. */
async function clearLeftOpen(
  trx: Transaction<DB>,
  object: { id: number; left_open_at: Date; left_open_entry: number | null },
  closedAt: Date,
  now: Date,
) {
  await trx
    .updateTable('device_objects')
    .set({ left_open_at: null, left_open_entry: null })
    .where('id', '=', object.id)
    .execute();
  const entry = object.left_open_entry === null ? undefined : await steppedEntry(trx, object.left_open_entry);
  if (!entry?.openedAt) return;
  await enqueueEvent(trx, {
    companyId: entry.companyId,
    type: 'gate.closed',
    at: now,
    data: {
      ...entry.base,
      opened_at: stepTime(entry.openedAt),
      left_open_at: stepTime(object.left_open_at),
      closed_at: stepTime(closedAt),
      open_for_s: secondsBetween(entry.openedAt, closedAt),
    },
  });
}

/** The entry's signed reports with this one appended: the proof of its steps (docs/design.md section 5.3). */
function withReport(report: PositionReport) {
  return sql`coalesce(journal.gate_reports, '[]'::jsonb) || jsonb_build_array(${jsonb(report)})`;
}
