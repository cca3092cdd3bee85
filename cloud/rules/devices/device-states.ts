import { sql } from 'kysely';
import type { DeviceState } from '../../../shared/protocol/messages.js';
import type { Clock } from '../../foundation/clock.js';
import type { Database } from '../../foundation/db/database.js';
import { StatementBatches } from '../../foundation/db/statement-batches.js';

interface Report {
  deviceId: string;
  state: DeviceState;
}

/**
 * What devices report in their `state` (online or not, version, objects), written many devices at a time
 * (docs/design.md section 7.3). Each connect and each will causes one; a fleet connecting at once would
 * otherwise wait on one transaction of four statements per device. Objects keep their `number_id` (the row
 * id) across reports, and take whether they have a position sensor from each (`sensor: true`; docs/design.md
 * section 7.5); one missing from a report is marked removed, and gets its old number back if it returns.
 * A report without `objects` leaves them as they are, one without a version (or with an empty one) the version,
 * and one without `arch` the arch.
 */
export class DeviceStates {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #batches = new StatementBatches<Report, boolean>((reports) => this.#writeAll(reports), {
    maxRows: 250,
    maxInFlight: 2,
  });

  constructor(db: Database, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Writes a device's report; false when no such device exists. */
  record(deviceId: string, state: DeviceState): Promise<boolean> {
    return this.#batches.submit({ deviceId, state });
  }

  /**
   * A device twice in one batch (its will racing its reconnect, say) is written in order: each statement takes
   * each device once, the later reports go in the next.
   */
  async #writeAll(reports: Report[]): Promise<boolean[]> {
    const written = new Array<boolean>(reports.length);
    let pending = reports.map((report, index) => ({ report, index }));
    while (pending.length > 0) {
      const seen = new Set<string>();
      const now: typeof pending = [];
      const later: typeof pending = [];
      for (const item of pending) {
        (seen.has(item.report.deviceId) ? later : now).push(item);
        seen.add(item.report.deviceId);
      }
      const found = await this.#write(now.map((item) => item.report));
      for (const item of now) written[item.index] = found.has(item.report.deviceId);
      pending = later;
    }
    return written;
  }

  /**
   * One statement for reports of distinct devices. Its parts touch different rows (the upsert only objects
   * listed, the removal only objects not listed), as a statement's parts must.
   */
  async #write(reports: Report[]): Promise<Set<string>> {
    const at = this.#clock.now();
    const objects = reports.flatMap(({ deviceId, state }) =>
      // One row per local id even if the report repeats one (the last wins), as the upsert needs.
      [...new Map((state.objects ?? []).map((object) => [object.id, object])).values()].map((object) => ({
        deviceId,
        ...object,
      })),
    );
    const { rows } = await sql<{ id: string }>`
      with reports as (
        select * from unnest(${reports.map((r) => r.deviceId)}::text[], ${reports.map((r) => r.state.online)}::boolean[],
          ${reports.map((r) => r.state.version || null)}::text[], ${reports.map((r) => r.state.objects !== undefined)}::boolean[],
          ${reports.map((r) => r.state.arch || null)}::text[])
          as report (device_id, online, version, lists_objects, arch)
      ),
      listed as (
        select * from unnest(${objects.map((o) => o.deviceId)}::text[], ${objects.map((o) => o.id)}::text[],
          ${objects.map((o) => o.label)}::text[], ${objects.map((o) => o.kind)}::text[],
          ${objects.map((o) => o.sensor === true)}::boolean[], ${objects.map((o) => o.gate_number ?? null)}::text[])
          as listed (device_id, local_id, label, kind, has_sensor, gate_number)
      ),
      updated as (
        update devices set online = report.online, state_at = ${at}::timestamptz,
               version = coalesce(report.version, devices.version),
               arch = coalesce(report.arch, devices.arch)
          from reports report
         where devices.id = report.device_id
        returning devices.id
      ),
      upserted as (
        insert into device_objects (device_id, local_id, label, kind, has_sensor, gate_number, removed_at)
        select listed.device_id, listed.local_id, listed.label, listed.kind, listed.has_sensor,
               listed.gate_number, null
          from listed join updated on updated.id = listed.device_id
        on conflict (device_id, local_id)
          do update set label = excluded.label, kind = excluded.kind, has_sensor = excluded.has_sensor,
                        gate_number = excluded.gate_number, removed_at = null
        returning 1
      ),
      removed as (
        update device_objects set removed_at = ${at}::timestamptz
          from reports report join updated on updated.id = report.device_id
         where device_objects.device_id = report.device_id and report.lists_objects
           and device_objects.removed_at is null
           and not exists (select 1 from listed
                            where listed.device_id = device_objects.device_id
                              and listed.local_id = device_objects.local_id)
        returning 1
      )
      select id from updated`.execute(this.#db);
    return new Set(rows.map((row) => row.id));
  }
}
