import {
  type PositionReport,
  positionReportSchema,
  verifyPositionReportOffThread,
} from '../../../../shared/protocol/positions.js';
import { databaseOutage } from '../../../foundation/db/database-outage.js';
import type { DeviceMessageHandler } from './handler.js';
import { verifiedBy } from './verified-by.js';

/**
 * `.../ack` with `type: 'position'`: a controller's signed report of a gate's position (docs/design.md section
 * 7.5). Past the dispatcher's checks (the schema, the device named inside equals the topic's), handed on to be
 * checked under that device's stored key, like an acknowledgement, then applied if newer than what the cloud
 * holds and attached to the opening it completes (cloud/rules/positions/position-reports.ts, with other reports).
 * Resolves once the report is handed on; every outcome is then logged and counted in
 * `gatelink_position_reports_total{result}`, and a failure to write is logged (once per outage of the database).
 */
export const positionHandler: DeviceMessageHandler<PositionReport> = {
  schema: positionReportSchema,
  malformed: 'dropped a malformed position report',
  foreign: 'dropped a position report naming another device',
  dropped(ctx, reason) {
    ctx.metrics.positionReport(reason);
  },
  async handle({ ctx, keys, positions }, deviceId, report) {
    const fields = { deviceId, object: report.object, position: report.position, reportId: report.id };
    // Handed on in the order received; checked and applied with others a moment later (nobody waits on it).
    const signed = () => verifiedBy(keys, deviceId, (key) => verifyPositionReportOffThread(key, report));
    positions.apply(report, signed).then(
      (result) => {
        ctx.metrics.positionReport(result);
        if (result === 'applied' || result === 'repeat')
          ctx.log.info({ ...fields, result }, 'position report');
        else if (result === 'bad_signature')
          ctx.log.warn(fields, 'dropped a position report with a bad signature');
        else ctx.log.warn({ ...fields, result, changedAt: report.changed_at }, 'dropped a position report');
      },
      (error: unknown) => {
        if (databaseOutage(ctx).failed(error, 'position report')) return;
        ctx.log.error({ ...fields, err: error }, 'applying a position report failed');
      },
    );
  },
};
