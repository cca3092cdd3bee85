import type { CloudContext } from '../../foundation/context.js';
import { closeGateAlerts } from './gate-alerts.js';
import { addRecipients } from './recipients.js';

/**
 * Follows the journal from a cursor and writes an outbox row per entry per subscription to tell, and per person
 * who also asked for e-mail (docs/design.md sections 10.6 and 10.7). `open` writes the journal in one statement that this never touches: nothing
 * here can slow or block an opening, which is why the rows are made after the fact rather than in its
 * transaction.
 *
 * Entries are read in id order. An id is taken when its insert runs and becomes visible at its commit, so a
 * later id may be seen before an earlier one: a gap in the ids is waited for (the fan-out stops before it)
 * until the entry after it is `GAP_GRACE_MS` old; by then the missing id was rolled back, or its transaction is
 * long past any opening's. The cursor row is taken `for update skip locked`: one instance fans out at a time,
 * and the rows and the cursor's move commit together, so nothing is told twice nor skipped after a crash.
 */
export const GAP_GRACE_MS = 10_000;
/** Entries read per fan-out. */
export const FAN_OUT_BATCH = 1000;

export interface FanOut {
  /** Journal entries read past. */
  entries: number;
  /** Push outbox rows written. */
  rows: number;
  /** E-mail outbox rows written. */
  mails: number;
}

export async function fanOutJournal(ctx: CloudContext, batch = FAN_OUT_BATCH): Promise<FanOut> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const cursor = await trx
      .selectFrom('push_journal_cursor')
      .select('last_entry_id')
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    // Another instance is fanning out now.
    if (!cursor) return { entries: 0, rows: 0, mails: 0 };
    // Gates closed since the last look: told here, under the cursor's lock, whether or not the journal grew.
    const closed = await closeGateAlerts(trx, now);
    const entries = await trx
      .selectFrom('journal')
      .select(['id', 'at'])
      .where('id', '>', cursor.last_entry_id)
      .orderBy('id')
      .limit(batch)
      .execute();
    const upto = readablePrefix(cursor.last_entry_id, entries, now);
    if (upto === cursor.last_entry_id) return { entries: 0, rows: closed.pushes, mails: closed.mails };
    const written = await addRecipients(trx, { afterId: cursor.last_entry_id, uptoId: upto, now });
    await trx.updateTable('push_journal_cursor').set({ last_entry_id: upto }).execute();
    return {
      entries: entries.filter((entry) => entry.id <= upto).length,
      rows: written.pushes + closed.pushes,
      mails: written.mails + closed.mails,
    };
  });
}

/**
 * What a delivery's look fans out: passes of FAN_OUT_BATCH entries while they come full, so that a backlog is read
 * through, and no pass more. Entries committed during the last pass wait for the next look (a wake or the poll):
 * under steady openings a look is one pass, not a chase after the journal's head, which on PostgreSQL took a
 * pass per few openings, four statements each (docs/design.md section 8.4).
 */
export async function fanOutBacklog(ctx: CloudContext): Promise<void> {
  for (;;) {
    const fanned = await fanOutJournal(ctx);
    if (fanned.entries < FAN_OUT_BATCH) return;
  }
}

/** The last id of the run of entries after `from` that has no gap still worth waiting for. */
function readablePrefix(from: number, entries: readonly { id: number; at: Date }[], now: Date): number {
  let upto = from;
  for (const entry of entries) {
    const gap = entry.id !== upto + 1;
    if (gap && now.getTime() - entry.at.getTime() < GAP_GRACE_MS) break;
    upto = entry.id;
  }
  return upto;
}
