import type { Transaction } from 'kysely';
import { type DeviceObject, type DeviceState, stateSchema } from '../../../shared/protocol/messages.js';
import type { DB } from '../../db/schema.js';
import type { DeviceMessageHandler } from './handler.js';

/**
 * `.../state` (retained; the will sets it offline): whether the device is online, its version, and, when
 * given, its objects. Objects keep their `number_id` (the row id) across reports; one missing from a report
 * is marked removed, and gets its old number back if it returns.
 */
export const stateHandler: DeviceMessageHandler<DeviceState> = {
  schema: stateSchema,
  malformed: 'dropped a malformed state',
  foreign: 'dropped a state naming another device',
  async handle({ ctx }, deviceId, state) {
    const now = ctx.clock.now();
    await ctx.db.transaction().execute(async (trx) => {
      const device = await trx
        .updateTable('devices')
        .set({ online: state.online, state_at: now, ...(state.version ? { version: state.version } : {}) })
        .where('id', '=', deviceId)
        .returning('id')
        .executeTakeFirst();
      if (!device) return;
      if (state.objects) await syncObjects(trx, deviceId, state.objects, now);
    });
    ctx.log.debug({ deviceId, online: state.online }, 'device state');
  },
};

async function syncObjects(
  trx: Transaction<DB>,
  deviceId: string,
  objects: DeviceObject[],
  now: Date,
): Promise<void> {
  // One row per local id even if the report repeats one (the last wins), as the upsert needs.
  const byId = new Map(objects.map((object) => [object.id, object]));
  const rows = [...byId.values()].map((object) => ({
    device_id: deviceId,
    local_id: object.id,
    label: object.label,
    kind: object.kind,
    removed_at: null,
  }));
  if (rows.length > 0) {
    await trx
      .insertInto('device_objects')
      .values(rows)
      .onConflict((conflict) =>
        conflict.columns(['device_id', 'local_id']).doUpdateSet((eb) => ({
          label: eb.ref('excluded.label'),
          kind: eb.ref('excluded.kind'),
          removed_at: null,
        })),
      )
      .execute();
  }
  let gone = trx
    .updateTable('device_objects')
    .set({ removed_at: now })
    .where('device_id', '=', deviceId)
    .where('removed_at', 'is', null);
  if (byId.size > 0) gone = gone.where('local_id', 'not in', [...byId.keys()]);
  await gone.execute();
}
