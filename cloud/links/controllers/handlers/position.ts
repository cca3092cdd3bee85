import {
  type PositionReport,
  positionReportSchema,
  verifyPositionReport,
} from '../../../../shared/protocol/positions.js';
import { applyPositionReport } from '../../../rules/positions/position-reports.js';
import type { DeviceMessageHandler } from './handler.js';
import { verifiedBy } from './verified-by.js';

/**
 * `.../ack` with `type: 'position'`: a controller's signed report of a gate's position (docs/design.md section
 * 7.5). Past the dispatcher's checks (the schema, the device named inside equals the topic's), checked under that
 * device's stored key, like an acknowledgement, then applied if newer than what the cloud holds and attached to
 * the opening it completes (cloud/rules/positions/position-reports.ts). Every outcome is logged and counted in
 * `gatelink_position_reports_total{result}`. A failure to write is thrown, and the report comes again.
 */
export const positionHandler: DeviceMessageHandler<PositionReport> = {
  schema: positionReportSchema,
  malformed: 'dropped a malformed position report',
  foreign: 'dropped a position report naming another device',
  dropped(ctx, reason) {
    ctx.metrics.positionReport(reason);
  },
  async handle({ ctx, keys }, deviceId, report) {
    const fields = { deviceId, object: report.object, position: report.position, reportId: report.id };
    if (!(await verifiedBy(keys, deviceId, (key) => verifyPositionReport(key, report)))) {
      ctx.metrics.positionReport('bad_signature');
      ctx.log.warn(fields, 'dropped a position report with a bad signature');
      return;
    }
    const result = await applyPositionReport(ctx, report);
    ctx.metrics.positionReport(result);
    if (result === 'applied' || result === 'repeat') ctx.log.info({ ...fields, result }, 'position report');
    else ctx.log.warn({ ...fields, result, changedAt: report.changed_at }, 'dropped a position report');
  },
};
