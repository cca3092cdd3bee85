import { createHash } from 'node:crypto';
import { normalizeCode, randomCode } from '../../../shared/codes.js';
import { KeyError, strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import { ApiError } from '../../../shared/errors.js';
import type { ProvisionRequest, ProvisionResponse } from '../../../shared/protocol/provisioning.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { revokeAccessKeysOfOthers } from '../access-keys/access-keys.js';
import { endHousehold } from '../households/household-lifecycle.js';
import { newDevicePassword } from './credentials.js';
import { barrierNameProblem } from './customer-barriers.js';
import { checkPhoneSetup } from './phone-setups.js';

/** Provisioning and pairing codes live 24 hours and work once (docs/design.md section 9). */
export const CODE_LIFETIME_MS = 24 * 3600 * 1000;
export const PROVISIONING_CODE_LENGTH = 16;
export const PAIRING_CODE_LENGTH = 8;

function hashCode(code: string): string {
  return createHash('sha256').update(normalizeCode(code)).digest('hex');
}

/** Groups a code in fours for reading aloud; normalizeCode ignores the hyphens again. */
function groupCode(code: string): string {
  return code.match(/.{1,4}/g)!.join('-');
}

/** An operator or installer creates the device record; the code goes to the installer once. */
export function createDevice(ctx: CloudContext, input: { label: string }) {
  return insertDeviceRecord(ctx.db, ctx.clock.now(), input);
}

/**
 * A device record waiting for its controller, with a one-time provisioning code that only its hash keeps: an
 * operator's (`createDevice`) or, bound to a customer's account, a phone set-up's (./phone-setups.ts).
 */
export async function insertDeviceRecord(
  db: Database,
  now: Date,
  input: { label: string; setupCustomerId?: number; timeZone?: string },
) {
  const code = randomCode(PROVISIONING_CODE_LENGTH);
  const expiresAt = new Date(now.getTime() + CODE_LIFETIME_MS);
  const device = await db
    .insertInto('devices')
    .values({
      id: `D${randomCode(10)}`,
      label: input.label,
      provisioning_code_hash: hashCode(code),
      provisioning_expires_at: expiresAt,
      created_at: now,
      ...(input.setupCustomerId === undefined ? {} : { setup_customer_id: input.setupCustomerId }),
      ...(input.timeZone === undefined ? {} : { time_zone: input.timeZone }),
    })
    .returning(['id', 'label'])
    .executeTakeFirstOrThrow();
  return {
    device_id: device.id,
    label: device.label,
    provisioning_code: groupCode(code),
    expires_at: expiresAt.toISOString(),
  };
}

export async function listDevices(ctx: CloudContext) {
  const rows = await ctx.db
    .selectFrom('devices')
    .select([
      'id',
      'label',
      'customer_id',
      'online',
      'provisioned_at',
      'state_at',
      'version',
      'arch',
      'telemetry',
      'created_at',
    ])
    .orderBy('created_at')
    .execute();
  const updates = await latestUpdates(ctx);
  return rows.map((row) => ({
    id: row.id,
    label: row.label,
    customer_id: row.customer_id,
    provisioned: row.provisioned_at !== null,
    online: row.online,
    version: row.version,
    arch: row.arch,
    last_seen: row.state_at?.toISOString() ?? null,
    update: updates.get(row.id) ?? null,
    telemetry: row.telemetry,
    created_at: row.created_at.toISOString(),
  }));
}

/** Each controller's progress in its newest rollout (docs/design.md section 12.4.2), by device id. */
async function latestUpdates(ctx: CloudContext) {
  const rows = await ctx.db
    .selectFrom('device_updates')
    .select(['device_id', 'rollout_id', 'state', 'reason', 'detail', 'updated_at'])
    .distinctOn('device_id')
    .orderBy('device_id')
    .orderBy('rollout_id', 'desc')
    .execute();
  return new Map(
    rows.map((row) => [
      row.device_id,
      {
        rollout_id: row.rollout_id,
        state: row.state,
        reason: row.reason,
        detail: row.detail,
        at: row.updated_at.toISOString(),
      },
    ]),
  );
}

/**
 * What provisioning needs of the controller link (cloud/links/controllers/controller-link.ts): the broker owns
 * device accounts, and tells a device where to connect.
 */
export interface DeviceAccounts {
  /** The URL a device uses to reach the broker. */
  readonly deviceUrl: string;
  /** Creates or replaces the broker account of a device. */
  addDevice(deviceId: string, password: string): Promise<void>;
  /** Removes the broker account of a retired device and ends its session (docs/design.md section 9.1). */
  removeDevice(deviceId: string): Promise<void>;
}

/**
 * `POST /api/device/provision`: the controller presents its one-time code and the public half of the key it
 * made itself, and gets its broker account, topic prefix, the cloud's command key and a pairing code.
 * The code is consumed in the same transaction, so it works exactly once.
 */
export async function provisionDevice(
  ctx: CloudContext,
  accounts: DeviceAccounts,
  input: ProvisionRequest,
): Promise<ProvisionResponse> {
  try {
    strictPublicKeyFromBase64(input.public_key);
  } catch (error) {
    const reason = error instanceof KeyError ? error.message : 'invalid key';
    throw new ApiError('invalid_field', {
      field: 'public_key',
      message: `public_key is not usable: ${reason}.`,
    });
  }
  const localIds = input.objects.map((object) => object.id);
  if (new Set(localIds).size !== localIds.length) {
    throw new ApiError('invalid_field', { field: 'objects', message: 'Object ids must be unique.' });
  }
  const now = ctx.clock.now();
  const password = newDevicePassword();
  const pairingCode = randomCode(PAIRING_CODE_LENGTH);
  const pairingExpiresAt = new Date(now.getTime() + CODE_LIFETIME_MS);
  const { deviceId, pairedTo, numbers } = await ctx.db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('devices')
      .select(['id', 'setup_customer_id'])
      .where('provisioning_code_hash', '=', hashCode(input.code))
      .where('provisioning_expires_at', '>', now)
      .forUpdate()
      .executeTakeFirst();
    if (!found) throw new ApiError('provisioning_code_invalid');
    const pairedTo = found.setup_customer_id;
    if (pairedTo !== null) checkPhoneSetup(input.objects);
    const device = await trx
      .updateTable('devices')
      .set({
        provisioning_code_hash: null,
        provisioning_expires_at: null,
        provisioned_at: now,
        public_key: input.public_key,
        version: input.version,
        // A customer's own code pairs the controller to their account at once (docs/design.md section 9.3).
        ...(pairedTo === null
          ? { pairing_code: pairingCode, pairing_expires_at: pairingExpiresAt }
          : {
              customer_id: pairedTo,
              paired_at: now,
              setup_customer_id: null,
              name: input.objects[0]!.label,
            }),
      })
      .where('id', '=', found.id)
      .returning('id')
      .executeTakeFirstOrThrow();
    const numbers = [];
    for (const object of input.objects) {
      const row = await trx
        .insertInto('device_objects')
        .values({
          device_id: device.id,
          local_id: object.id,
          label: object.label,
          kind: object.kind,
          // As its state will say it (docs/design.md section 7.5), from the first opening on.
          has_sensor: object.sensor === true,
          gate_number: object.gate_number ?? null,
        })
        .onConflict((oc) =>
          oc.columns(['device_id', 'local_id']).doUpdateSet({
            label: object.label,
            kind: object.kind,
            has_sensor: object.sensor === true,
            gate_number: object.gate_number ?? null,
            removed_at: null,
          }),
        )
        .returning(['id', 'local_id', 'label'])
        .executeTakeFirstOrThrow();
      numbers.push({ id: row.local_id, number_id: row.id, label: row.label });
    }
    return { deviceId: device.id, pairedTo, numbers };
  });
  // The broker owns device accounts: the embedded one stores the password's hash, Mosquitto its own account.
  await accounts.addDevice(deviceId, password);
  return {
    device_id: deviceId,
    mqtt: { url: accounts.deviceUrl, username: deviceId, password },
    topic_prefix: ctx.config.topicPrefix,
    command_key: ctx.serviceKey.publicKey.base64,
    ...(ctx.config.releasePublicKey ? { release_key: ctx.config.releasePublicKey } : {}),
    ...(pairedTo === null
      ? { pairing_code: groupCode(pairingCode), pairing_expires_at: pairingExpiresAt.toISOString() }
      : { paired: true }),
    numbers,
  };
}

/**
 * The customer enters the controller's pairing code, and names the barrier; it becomes theirs
 * (docs/design.md sections 9 and 10.4). The code works once: pairing clears it in the same statement that
 * hands the controller over, so a code that was read off the controller, or one used already, takes nothing
 * from its owner. A controller changes hands only with a fresh code, which its owner's removal or provisioning it again gives;
 * then every key the previous owner granted on it is revoked in the same transaction, with its event, so a
 * company they trusted cannot open the next owner's gate.
 */
export async function pairDevice(
  ctx: CloudContext,
  input: { customerId: number; pairingCode: string; name?: string },
) {
  if (input.name !== undefined) {
    const problem = barrierNameProblem(input.name);
    if (problem) throw new ApiError('invalid_field', { field: 'name', message: problem });
  }
  const now = ctx.clock.now();
  const { device, revokedKeys } = await ctx.db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('devices')
      .select(['id', 'customer_id', 'name'])
      .where('pairing_code', '=', normalizeCode(input.pairingCode))
      .where('pairing_expires_at', '>', now)
      .forUpdate()
      .executeTakeFirst();
    if (!found) throw new ApiError('pairing_code_invalid');
    const sameOwner = found.customer_id === input.customerId;
    // A controller that changes hands leaves its previous owner's household behind (docs/design.md section 9.2).
    if (!sameOwner) await endHousehold(trx, { deviceId: found.id, now });
    const revokedKeys = await revokeAccessKeysOfOthers(trx, {
      deviceId: found.id,
      customerId: input.customerId,
      now,
    });
    const device = await trx
      .updateTable('devices')
      .set({
        customer_id: input.customerId,
        pairing_code: null,
        pairing_expires_at: null,
        paired_at: now,
        // A new owner never sees the name the previous one gave.
        name: input.name ?? (sameOwner ? found.name : null),
      })
      .where('id', '=', found.id)
      .returning(['id', 'label', 'name'])
      .executeTakeFirstOrThrow();
    return { device, revokedKeys };
  });
  const objects = await ctx.db
    .selectFrom('device_objects')
    .select(['id as number_id', 'label'])
    .where('device_id', '=', device.id)
    .where('removed_at', 'is', null)
    .orderBy('id')
    .execute();
  return {
    device_id: device.id,
    label: device.label,
    name: device.name ?? device.label,
    objects,
    revokedKeys,
  };
}
