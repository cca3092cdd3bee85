import type { CloudContext } from '../foundation/context.js';
import { databaseOutage } from '../foundation/db/database-outage.js';
import type { UpdateDelivery } from '../rules/rollouts/update-delivery.js';
import { PeriodicJob } from './periodic-job.js';

/** How often running rollouts are looked at for controllers to send to, by default. */
export const UPDATE_DELIVERY_INTERVAL_MS = 30_000;

/** The periodic delivery of rollouts' update commands (docs/design.md section 12.4.2). */
export function updateDeliveryJob(
  ctx: CloudContext,
  updates: UpdateDelivery,
  intervalMs: number,
): PeriodicJob {
  return new PeriodicJob({
    name: 'update delivery',
    intervalMs,
    run: () => updates.deliverDue(),
    log: ctx.log,
    outage: databaseOutage(ctx),
  });
}
