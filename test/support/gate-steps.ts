import type { AssembledContext } from '../../cloud/context.js';
import { insertEntries, type JournalBarrier, type KeyHolder } from './barrier-journal.js';

/**
 * What the customer pages' suites stand on for gate positions (docs/design.md sections 7.5 and 10.4-10.5): the
 * steps of an opening and an object's position written straight to the database, as the controller's reports
 * and the sweeps leave them (those have suites of their own).
 */
export interface StepTimes {
  /** The acknowledgement's `received_at`, kept in the signed ack. */
  delivered?: Date;
  relayFired?: Date;
  opened?: Date;
  closed?: Date;
  notMoved?: Date;
  leftOpen?: Date;
}

/** Writes an entry's steps after its acknowledgement; the ack is the shape the controller signs. */
export async function writeSteps(ctx: AssembledContext, entryId: number, steps: StepTimes): Promise<void> {
  const ack = steps.delivered
    ? JSON.stringify({
        v: 1,
        command_id: '00000000-0000-4000-8000-000000000000',
        outcome: 'opened',
        received_at: steps.delivered.getTime(),
        finished_at: (steps.relayFired ?? steps.delivered).getTime(),
        sig: 'signed-by-the-controller',
      })
    : null;
  await ctx.db
    .updateTable('journal')
    .set({
      ack,
      ...(steps.relayFired ? { acked_at: steps.relayFired } : {}),
      gate_opened_at: steps.opened ?? null,
      gate_closed_at: steps.closed ?? null,
      gate_not_moved_at: steps.notMoved ?? null,
      left_open_at: steps.leftOpen ?? null,
    })
    .where('id', '=', entryId)
    .execute();
}

/** Marks an object as having a sensor, with its position now (null: not reported yet). */
export async function sensorOn(
  ctx: AssembledContext,
  objectId: number,
  position: { position: 'open' | 'closed'; since: Date; leftOpenAt?: Date } | null,
): Promise<void> {
  await ctx.db
    .updateTable('device_objects')
    .set({
      has_sensor: true,
      position: position?.position ?? null,
      position_since: position?.since ?? null,
      left_open_at: position?.leftOpenAt ?? null,
    })
    .where('id', '=', objectId)
    .execute();
}

const S = 1000;
const MIN = 60 * S;

/**
 * Four openings of one gate with a sensor, an hour apart from `start` (ids rising): one that opened 1.8 s after
 * the relay and closed 42 s later, one whose gate did not move, one left open (the alert 10 min after), and one
 * still open; with each its steps. Returns their ids in that order.
 */
export async function gateStories(
  ctx: AssembledContext,
  barrier: JournalBarrier,
  holder: KeyHolder,
  start: Date,
): Promise<{ closed: number; notMoved: number; leftOpen: number; stillOpen: number }> {
  const at = (hours: number, ms = 0) => new Date(start.getTime() + hours * 60 * MIN + ms);
  const [closed, notMoved, leftOpen, stillOpen] = await insertEntries(ctx, barrier, [
    { holder, actor: 'Anna, shift 2', at: at(0) },
    { holder, actor: 'Ben, van 7', at: at(1) },
    { holder, actor: 'Cleo, night round', at: at(2) },
    { holder, actor: 'Dan, early shift', at: at(3) },
  ]);
  await writeSteps(ctx, closed!, {
    delivered: at(0, 150),
    relayFired: at(0, 900),
    opened: at(0, 2700),
    closed: at(0, 44_700),
  });
  await writeSteps(ctx, notMoved!, {
    delivered: at(1, 200),
    relayFired: at(1, 1000),
    notMoved: at(1, 31_000),
  });
  await writeSteps(ctx, leftOpen!, {
    delivered: at(2, 120),
    relayFired: at(2, 800),
    opened: at(2, 3000),
    leftOpen: at(2, 3000 + 10 * MIN + 20 * S),
  });
  await writeSteps(ctx, stillOpen!, {
    delivered: at(3, 100),
    relayFired: at(3, 700),
    opened: at(3, 5700),
  });
  return { closed: closed!, notMoved: notMoved!, leftOpen: leftOpen!, stillOpen: stillOpen! };
}
