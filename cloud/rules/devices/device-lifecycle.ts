import { type Transaction as KyselyTransaction, sql } from 'kysely';
import { normalizeCode, randomCode } from '../../../shared/codes.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DB } from '../../foundation/db/schema.js';
import {
  revokeAccessKeysOfOthers,
  revokeKeysOnDevice,
  revokeKeysWithoutObjects,
} from '../access-keys/access-keys.js';
import { endHousehold, forgetInvitations, moveHousehold } from '../households/household-lifecycle.js';
import { keepRetiredKey, moveChains } from '../receipts/chain-moves.js';
import { CODE_LIFETIME_MS, type DeviceAccounts, PAIRING_CODE_LENGTH } from './devices.js';

type Transaction = KyselyTransaction<DB>;

/**
 * A controller's life after pairing (docs/design.md section 9.1): its owner removes it (and so hands it over),
 * a broken one is replaced by a new one at the same barrier, an operator retires a record. Each is one
 * transaction with the `request.revoked` events of the keys it ends; the broker account of a retired
 * controller is removed after the commit.
 */

/** What the broker's side of removal needs: removing a controller's account ends its session too. */
export type BrokerAccounts = Pick<DeviceAccounts, 'removeDevice'>;

/**
 * The customer removes a barrier from their account: every key on it is revoked with its event, the
 * controller's owner, name and pairing time are cleared, and it gets a fresh pairing code, so the next owner
 * can add it (with `gatelink-device pairing-code` on the controller). The next owner sees none of this
 * owner's journal: a barrier's journal is the entries of its owner's keys. The owner's household ends with it
 * (docs/design.md section 9.2). Only the owner removes a barrier: a member's attempt answers 404.
 */
export async function removeBarrier(
  ctx: CloudContext,
  input: { customerId: number; deviceId: string },
): Promise<{ revokedKeys: number; pairingExpiresAt: Date }> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const device = await trx
      .selectFrom('devices')
      .select('id')
      .where('id', '=', input.deviceId)
      .where('customer_id', '=', input.customerId)
      .forUpdate()
      .executeTakeFirst();
    if (!device) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
    const revokedKeys = await revokeKeysOnDevice(trx, {
      deviceId: device.id,
      now,
      customerId: input.customerId,
    });
    await endHousehold(trx, { deviceId: device.id, now });
    const pairingExpiresAt = new Date(now.getTime() + CODE_LIFETIME_MS);
    await trx
      .updateTable('devices')
      .set({
        customer_id: null,
        name: null,
        paired_at: null,
        pairing_code: randomCode(PAIRING_CODE_LENGTH),
        pairing_expires_at: pairingExpiresAt,
      })
      .where('id', '=', device.id)
      .execute();
    return { revokedKeys, pairingExpiresAt };
  });
}

/** Which controller replaces the old one: the code on it (the customer), or its id (an operator). */
export type ReplacementTarget = { pairingCode: string } | { deviceId: string };

export interface ReplacementResult {
  oldDeviceId: string;
  newDeviceId: string;
  /** Objects carried over by label, with the `number_id` companies already open them with. */
  carried: string[];
  /** Keys revoked because none of their objects exist on the new controller. */
  revokedKeys: number;
}

/**
 * A broken controller replaced by a new one at the same barrier (docs/design.md section 9.1). The new
 * controller's device id is its broker account, its topics and what every command names, so the barrier's
 * rows move to it: its owner and name, its keys (same `key_ref`), its journal and history, and each object whose
 * label the new controller also has, keeping its `number_id` (the new controller's own row for that label makes
 * way), so companies' `status` and `open` keep working unchanged. An object with no match leaves the keys; a key
 * left with none is revoked with its event. The old record is retired (`retireInTransaction`).
 * `customerId` holds the old controller to that customer (the customer's page); an operator passes none.
 */
export async function replaceController(
  ctx: CloudContext,
  accounts: BrokerAccounts,
  input: { oldDeviceId: string; customerId?: number; target: ReplacementTarget },
): Promise<ReplacementResult> {
  const now = ctx.clock.now();
  const result = await ctx.db.transaction().execute(async (trx) => {
    const old = await lockOld(trx, input);
    const fresh = await lockReplacement(trx, input.target, now);
    if (fresh.id === old.id) {
      throw new ApiError('conflict', { message: 'A controller cannot replace itself.' });
    }
    if (old.customer_id !== null) {
      await revokeAccessKeysOfOthers(trx, { deviceId: fresh.id, customerId: old.customer_id, now });
    }
    const carried = await moveObjects(trx, { from: old.id, to: fresh.id, now });
    await trx.updateTable('keys').set({ device_id: fresh.id }).where('device_id', '=', old.id).execute();
    await trx
      .updateTable('access_history')
      .set({ device_id: fresh.id })
      .where('device_id', '=', old.id)
      .execute();
    await moveChains(trx, { from: old.id, to: fresh.id });
    await moveHousehold(trx, { from: old.id, to: fresh.id });
    await trx.updateTable('journal').set({ device_id: fresh.id }).where('device_id', '=', old.id).execute();
    const revokedKeys = await revokeKeysWithoutObjects(trx, {
      deviceId: fresh.id,
      now,
      customerId: input.customerId,
    });
    await trx
      .updateTable('devices')
      .set({
        customer_id: old.customer_id,
        name: old.name,
        paired_at: old.paired_at ?? (old.customer_id === null ? null : now),
        pairing_code: null,
        pairing_expires_at: null,
      })
      .where('id', '=', fresh.id)
      .execute();
    await retireInTransaction(trx, old.id, now);
    return { oldDeviceId: old.id, newDeviceId: fresh.id, carried, revokedKeys };
  });
  await accounts.removeDevice(result.oldDeviceId);
  return result;
}

async function lockOld(trx: Transaction, input: { oldDeviceId: string; customerId?: number }) {
  let query = trx
    .selectFrom('devices')
    .select(['id', 'customer_id', 'name', 'paired_at'])
    .where('id', '=', input.oldDeviceId)
    // A retired record (neither provisioned nor anyone's) has nothing left to hand on.
    .where((eb) => eb.or([eb('provisioned_at', 'is not', null), eb('customer_id', 'is not', null)]));
  if (input.customerId !== undefined) query = query.where('customer_id', '=', input.customerId);
  const old = await query.forUpdate().executeTakeFirst();
  if (!old) {
    throw new ApiError('not_found', {
      message:
        input.customerId === undefined ? 'No such provisioned controller.' : 'No such barrier among yours.',
    });
  }
  return old;
}

/** The new controller: provisioned, on no customer's account, found by its valid pairing code or its id. */
async function lockReplacement(trx: Transaction, target: ReplacementTarget, now: Date) {
  let query = trx
    .selectFrom('devices')
    .select('id')
    .where('provisioned_at', 'is not', null)
    .where('customer_id', 'is', null);
  query =
    'pairingCode' in target
      ? query
          .where('pairing_code', '=', normalizeCode(target.pairingCode))
          .where('pairing_expires_at', '>', now)
      : query.where('id', '=', target.deviceId);
  const fresh = await query.forUpdate().executeTakeFirst();
  if (fresh) return fresh;
  if ('pairingCode' in target) throw new ApiError('pairing_code_invalid');
  throw new ApiError('conflict', {
    message: 'The new controller must be provisioned and on no customer’s account.',
  });
}

/**
 * The old controller's objects move to the new one where a label matches, each keeping its id (the
 * `number_id` in keys, journal entries and companies' code) and taking the new controller's local id and
 * kind. The new controller's own row for that label is deleted, or, when something already refers to it (a
 * controller with a past), marked removed under another local id. Returns the labels carried over.
 */
async function moveObjects(
  trx: Transaction,
  move: { from: string; to: string; now: Date },
): Promise<string[]> {
  const rows = await trx
    .selectFrom('device_objects')
    .select(['id', 'device_id', 'local_id', 'label', 'kind'])
    .where('device_id', 'in', [move.from, move.to])
    .where('removed_at', 'is', null)
    .orderBy('id')
    .execute();
  const incoming = new Map<string, (typeof rows)[number]>();
  for (const row of rows)
    if (row.device_id === move.to && !incoming.has(row.label)) incoming.set(row.label, row);
  const carried: string[] = [];
  for (const old of rows.filter((row) => row.device_id === move.from)) {
    const match = incoming.get(old.label);
    if (!match) continue;
    incoming.delete(old.label);
    await makeWay(trx, match.id, move.now);
    await trx
      .updateTable('device_objects')
      .set({ device_id: move.to, local_id: match.local_id, kind: match.kind })
      .where('id', '=', old.id)
      .execute();
    carried.push(old.label);
  }
  return carried;
}

async function makeWay(trx: Transaction, objectId: number, now: Date): Promise<void> {
  const used = await trx
    .selectFrom('key_objects')
    .select('key_id')
    .where('object_id', '=', objectId)
    .union(trx.selectFrom('journal').select('key_id').where('object_id', '=', objectId))
    .limit(1)
    .executeTakeFirst();
  if (!used) {
    await trx.deleteFrom('device_objects').where('id', '=', objectId).execute();
    return;
  }
  await trx
    .updateTable('device_objects')
    .set({
      removed_at: now,
      // Typed: a bare parameter in concat() has no type the database can settle on (42P18).
      local_id: sql<string>`local_id || ${`#${objectId}`}::text`,
    })
    .where('id', '=', objectId)
    .execute();
}

/**
 * An operator retires a controller's record (`gatelink-admin device remove`): its keys are revoked with their
 * events, its household ended, its broker account removed, its provisioning and pairing cleared. A record that keys or journal
 * entries refer to is kept, retired, so those stay readable; one nothing refers to is deleted.
 */
export async function retireDevice(
  ctx: CloudContext,
  accounts: BrokerAccounts,
  deviceId: string,
): Promise<{ revokedKeys: number; deleted: boolean }> {
  const now = ctx.clock.now();
  const result = await ctx.db.transaction().execute(async (trx) => {
    const device = await trx
      .selectFrom('devices')
      .select('id')
      .where('id', '=', deviceId)
      .forUpdate()
      .executeTakeFirst();
    if (!device) throw new ApiError('not_found', { message: 'No such device.' });
    const revokedKeys = await revokeKeysOnDevice(trx, { deviceId, now });
    await endHousehold(trx, { deviceId, now });
    if (!(await referenced(trx, deviceId))) {
      await forgetInvitations(trx, deviceId);
      await trx.deleteFrom('devices').where('id', '=', deviceId).execute();
      return { revokedKeys, deleted: true };
    }
    await retireInTransaction(trx, deviceId, now);
    return { revokedKeys, deleted: false };
  });
  await accounts.removeDevice(deviceId);
  return result;
}

async function referenced(trx: Transaction, deviceId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('keys')
    .select('id')
    .where('device_id', '=', deviceId)
    .union(trx.selectFrom('journal').select('id').where('device_id', '=', deviceId))
    .union(
      trx
        .selectFrom('journal')
        .innerJoin('device_objects', 'device_objects.id', 'journal.object_id')
        .select('journal.id')
        .where('device_objects.device_id', '=', deviceId),
    )
    .union(
      trx
        .selectFrom('key_objects')
        .innerJoin('device_objects', 'device_objects.id', 'key_objects.object_id')
        .select('key_objects.key_id as id')
        .where('device_objects.device_id', '=', deviceId),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A retired record: no owner, no key to sign with, no provisioning or pairing code, not provisioned, so
 * neither device calls, pairing nor provisioning reach it again. Its objects stay for the journal's labels.
 */
async function retireInTransaction(trx: Transaction, deviceId: string, now: Date): Promise<void> {
  await keepRetiredKey(trx, deviceId, now);
  await trx
    .updateTable('devices')
    .set({
      customer_id: null,
      name: null,
      paired_at: null,
      public_key: null,
      mqtt_password_hash: null,
      provisioning_code_hash: null,
      provisioning_expires_at: null,
      provisioned_at: null,
      pairing_code: null,
      pairing_expires_at: null,
      online: false,
    })
    .where('id', '=', deviceId)
    .execute();
  await trx
    .updateTable('device_objects')
    .set({ removed_at: now })
    .where('device_id', '=', deviceId)
    .where('removed_at', 'is', null)
    .execute();
}
