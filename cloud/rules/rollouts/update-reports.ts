import { sql } from 'kysely';
import type { UpdateReport } from '../../../shared/protocol/update-report.js';
import type { CloudContext } from '../../foundation/context.js';

/** The update states after which a controller expects nothing more of a rollout. */
export const FINAL_UPDATE_STATES = ['healthy', 'rolled_back', 'refused', 'failed'] as const;

/**
 * A controller's update report, from its retained state (docs/design.md section 12.4.2), applied to its row of
 * that rollout. A report naming a rollout the controller is not in is ignored. The same report comes again
 * with every reconnect and is then left as it is. After a roll-back the rollout's threshold is checked.
 */
export async function applyUpdateReport(
  ctx: CloudContext,
  deviceId: string,
  report: UpdateReport,
): Promise<void> {
  const applied = await ctx.db
    .updateTable('device_updates')
    .set({
      state: report.state,
      reason: report.reason ?? null,
      detail: report.detail ?? null,
      updated_at: ctx.clock.now(),
    })
    .where('rollout_id', '=', report.rollout_id)
    .where('device_id', '=', deviceId)
    .where((eb) =>
      eb.or([eb('state', '!=', report.state), eb('reason', 'is distinct from', report.reason ?? null)]),
    )
    .executeTakeFirst();
  if (applied.numUpdatedRows === 0n) return;
  ctx.metrics.updateReport(report.state, report.reason);
  if (report.state === 'rolled_back') await haltIfTooManyRollBacks(ctx, report.rollout_id);
  await finishIfDone(ctx, report.rollout_id);
}

/**
 * Halts a running or paused rollout once more than its max_rollback_share of the targeted controllers rolled
 * back: a release that does not come up healthy must not reach the rest of the fleet.
 */
export async function haltIfTooManyRollBacks(ctx: CloudContext, rolloutId: number): Promise<boolean> {
  const { rows } = await sql<{ targeted: string; rolled_back: string; share: number }>`
    select count(*) as targeted,
           count(*) filter (where device_updates.state = 'rolled_back') as rolled_back,
           rollouts.max_rollback_share as share
      from device_updates join rollouts on rollouts.id = device_updates.rollout_id
     where device_updates.rollout_id = ${rolloutId}
     group by rollouts.max_rollback_share`.execute(ctx.db);
  const row = rows[0];
  if (!row) return false;
  const targeted = Number(row.targeted);
  const rolledBack = Number(row.rolled_back);
  if (rolledBack / targeted <= row.share) return false;
  const reason = `${rolledBack} of ${targeted} controllers rolled back, more than ${Math.round(row.share * 100)}%`;
  const halted = await ctx.db
    .updateTable('rollouts')
    .set({ state: 'halted', halted_reason: reason, updated_at: ctx.clock.now() })
    .where('id', '=', rolloutId)
    .where('state', 'in', ['running', 'paused'])
    .executeTakeFirst();
  if (halted.numUpdatedRows === 0n) return false;
  ctx.metrics.rolloutHalted();
  ctx.log.warn({ rolloutId, reason }, 'rollout halted');
  return true;
}

/** A running rollout whose every controller reached a final state is finished. */
async function finishIfDone(ctx: CloudContext, rolloutId: number): Promise<void> {
  await ctx.db
    .updateTable('rollouts')
    .set({ state: 'finished', updated_at: ctx.clock.now() })
    .where('id', '=', rolloutId)
    .where('state', '=', 'running')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('device_updates')
            .select('device_id')
            .where('rollout_id', '=', rolloutId)
            .where('state', 'not in', [...FINAL_UPDATE_STATES]),
        ),
      ),
    )
    .execute();
}

/** Marks a controller already on the release's version healthy, without sending it anything. */
export async function markAlreadyThere(
  ctx: CloudContext,
  rolloutId: number,
  deviceId: string,
): Promise<void> {
  await ctx.db
    .updateTable('device_updates')
    .set({ state: 'healthy', reason: null, detail: 'already on this version', updated_at: ctx.clock.now() })
    .where('rollout_id', '=', rolloutId)
    .where('device_id', '=', deviceId)
    .execute();
  await finishIfDone(ctx, rolloutId);
}
