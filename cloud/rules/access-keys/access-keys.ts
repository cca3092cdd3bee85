import type { Selectable, Transaction } from 'kysely';
import { keyNumber } from '../../../shared/company-api/key-numbers.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DB, KeysTable } from '../../foundation/db/schema.js';
import { requestIssued, requestRevoked } from '../events/event-data.js';
import { enqueueEvent } from '../events/outbox.js';
import { type KeyShape, storedWindows } from '../grant-shapes/stored-shape.js';
import { standingFor } from '../households/barrier-roles.js';
import { type AccessRequest, effectiveState, lockRequest, requestIdByCode } from '../requests/requests.js';
import { recordAccessAct } from './access-history.js';

/**
 * The customer's moves on a request (docs/design.md sections 3 and 10.4): claim,
 * grant (issue a key) and withdraw (revoke). Each is one transaction together with its event, so a
 * company never hears of a change that was not committed.
 *
 * Claiming, which comes before a key exists, is in cloud/rules/requests/claim.ts.
 */

/**
 * The customer grants access: chooses the barrier, the objects in the key and its lifetime (until revoked,
 * or until `keyExpiresAt`). Returns the `key_ref` the company opens with. The barrier is one the customer owns
 * or may grant on as a member (docs/design.md section 9.2); the key is the household's, kept under the owner
 * (`keys.customer_id`), whose journal and receipts it joins, and the history names who granted it.
 */
export async function issueAccessKey(
  ctx: CloudContext,
  input: IssueInput,
): Promise<{ keyRef: number; request: AccessRequest }> {
  const id = await requestIdByCode(ctx, input.code);
  const objectIds = [...new Set(input.objectIds)];
  if (objectIds.length === 0)
    throw new ApiError('invalid_field', { field: 'objects', message: 'Choose at least one object.' });
  return ctx.db.transaction().execute(async (trx) => {
    const request = await lockRequest(trx, id);
    const now = ctx.clock.now();
    checkGrantable(request, input, now);
    const { ownerId, objects } = await grantedObjects(trx, input, objectIds);
    const key = await trx
      .insertInto('keys')
      .values({
        request_id: request.id,
        company_id: request.company_id,
        customer_id: ownerId,
        device_id: input.deviceId,
        issued_at: now,
        expires_at: input.keyExpiresAt,
        starts_at: input.shape?.startsAt ?? null,
        windows: input.shape?.windows ? JSON.stringify(storedWindows(input.shape.windows)) : null,
        openings_allowed: input.shape?.openings ?? null,
        ask_first_s: input.askFirstS ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('key_objects')
      .values(objectIds.map((objectId) => ({ key_id: key.id, object_id: objectId })))
      .execute();
    await recordAccessAct(trx, {
      act: 'granted',
      key: { id: key.id, device_id: input.deviceId, company_id: request.company_id },
      customerId: input.customerId,
      at: now,
    });
    const issued = await trx
      .updateTable('requests')
      .set({ state: 'issued', issued_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueueEvent(trx, {
      companyId: issued.company_id,
      type: 'request.issued',
      at: now,
      data: requestIssued(
        issued,
        {
          id: key.id,
          expiresAt: input.keyExpiresAt,
          numbers: objects.map(keyNumber),
        },
        now,
      ),
    });
    await input.alongside?.(trx, key.id);
    return { keyRef: key.id, request: issued };
  });
}

interface IssueInput {
  code: string;
  customerId: number;
  deviceId: string;
  objectIds: number[];
  keyExpiresAt: Date | null;
  /** The rest of the grant's shape (docs/design.md section 3.1); none: at any hour, from now, as often as needed. */
  shape?: Pick<KeyShape, 'startsAt' | 'windows' | 'openings'>;
  /** "Ask me before each opening" (docs/design.md section 10.8): how long an `open` waits; none: it does not ask. */
  askFirstS?: number | null;
  /** The caller's own writes, committed with the grant: a sandbox move's line in the members' record. */
  alongside?: Alongside;
}

/** Writes of a caller's that commit with a customer's move, or not at all; given the key the move concerns. */
export type Alongside = (trx: Transaction<DB>, keyRef: number) => Promise<void>;

/** Access is granted on a request this customer claimed, for a lifetime that ends in the future. */
function checkGrantable(request: AccessRequest, input: IssueInput, now: Date): void {
  const state = effectiveState(request, now);
  if (state !== 'claimed' || request.customer_id !== input.customerId) {
    throw new ApiError('invalid_state', {
      message: `Access can be granted on a claimed request; this one is ${state}.`,
    });
  }
  if (input.keyExpiresAt && input.keyExpiresAt <= now) {
    throw new ApiError('invalid_field', {
      field: 'key_expires_at',
      message: 'The end of access must be in the future.',
    });
  }
  const startsAt = input.shape?.startsAt;
  if (startsAt && input.keyExpiresAt && startsAt >= input.keyExpiresAt) {
    throw new ApiError('invalid_field', {
      field: 'starts_at',
      message: 'The start of access must come before its end.',
    });
  }
}

/**
 * The objects in the key: every one must be a current object of a barrier the customer may grant on; with the
 * barrier's owner, under whom the key is kept.
 */
async function grantedObjects(
  trx: Transaction<DB>,
  input: IssueInput,
  objectIds: number[],
): Promise<{ ownerId: number; objects: { id: number; label: string; kind: string }[] }> {
  const { ownerId } = await standingFor(trx, {
    customerId: input.customerId,
    deviceId: input.deviceId,
    need: 'grant',
  });
  const objects = await trx
    .selectFrom('device_objects')
    .select(['id', 'label', 'kind'])
    .where('device_id', '=', input.deviceId)
    .where('id', 'in', objectIds)
    .where('removed_at', 'is', null)
    .execute();
  if (objects.length !== objectIds.length) {
    throw new ApiError('invalid_field', {
      field: 'objects',
      message: 'Every object must belong to the barrier.',
    });
  }
  return { ownerId, objects };
}

/**
 * The customer withdraws access at once: the next `open` answers 403 `revoked`. With `deviceId`, only a key on
 * that barrier is found, so a withdrawal posted to one barrier's page cannot reach a key on another (docs/design.md section
 * 10.4), and only by its owner or a member who may grant (section 9.2); the history names who withdrew it. Any
 * other key answers exactly like one that does not exist.
 */
export async function revokeAccessKey(
  ctx: CloudContext,
  input: { keyRef: number; customerId: number; deviceId?: string; alongside?: Alongside },
): Promise<AccessRequest> {
  return ctx.db.transaction().execute(async (trx) => {
    // Without a barrier named, the key's own: its barrier's household is what decides.
    const deviceId = input.deviceId ?? (await deviceOfKey(trx, input.keyRef));
    const standing = await standingOrNoKey(trx, { customerId: input.customerId, deviceId });
    const key = await trx
      .selectFrom('keys')
      .selectAll()
      .where('id', '=', input.keyRef)
      .where('customer_id', '=', standing.ownerId)
      .where('device_id', '=', deviceId)
      .forUpdate()
      .executeTakeFirst();
    if (!key) throw new ApiError('not_found', { message: 'No such key among yours.' });
    const revoked = await revokeLockedKey(trx, key, { now: ctx.clock.now(), by: input.customerId });
    await input.alongside?.(trx, key.id);
    return revoked;
  });
}

async function deviceOfKey(trx: Transaction<DB>, keyRef: number): Promise<string> {
  const key = await trx.selectFrom('keys').select('device_id').where('id', '=', keyRef).executeTakeFirst();
  if (!key) throw new ApiError('not_found', { message: 'No such key among yours.' });
  return key.device_id;
}

/**
 * The standing of a customer who may grant on the barrier; anyone else is told of the key as of one that does not
 * exist, whether the barrier is theirs to look at or not.
 */
export async function standingOrNoKey(
  trx: Transaction<DB>,
  input: { customerId: number; deviceId: string },
): Promise<{ ownerId: number }> {
  try {
    return await standingFor(trx, { ...input, need: 'grant' });
  } catch (error) {
    if (error instanceof ApiError && error.code === 'not_found') {
      throw new ApiError('not_found', { message: 'No such key among yours.' });
    }
    throw error;
  }
}

/**
 * A controller that changes hands takes no access with it: when a customer pairs a controller that another
 * customer had, every key still standing on it is revoked in the pairing's transaction, each with its
 * `request.revoked` event (docs/design.md section 10.4). Returns how many were revoked.
 */
export async function revokeAccessKeysOfOthers(
  trx: Transaction<DB>,
  input: { deviceId: string; customerId: number; now: Date },
): Promise<number> {
  const keys = await trx
    .selectFrom('keys')
    .selectAll()
    .where('device_id', '=', input.deviceId)
    .where('customer_id', '!=', input.customerId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  // The new owner ended no key of theirs: the barrier's history records the act with no customer.
  for (const key of keys) await revokeLockedKey(trx, key, { now: input.now, by: null });
  return keys.length;
}

/**
 * Every key still standing on a controller is revoked, each with its event: its owner removed the barrier or
 * an operator retired the record (docs/design.md section 9.1). Returns how many were revoked. `customerId` is
 * the owner who removed it, for the barrier's history; an operator passes none.
 */
export async function revokeKeysOnDevice(
  trx: Transaction<DB>,
  input: { deviceId: string; now: Date; customerId?: number },
): Promise<number> {
  const keys = await trx
    .selectFrom('keys')
    .selectAll()
    .where('device_id', '=', input.deviceId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  for (const key of keys) await revokeLockedKey(trx, key, { now: input.now, by: input.customerId ?? null });
  return keys.length;
}

/**
 * After a replacement (docs/design.md section 9.1): a standing key on the controller loses the objects that are
 * not the controller's, and a key left with none is revoked with its event, since it could open nothing.
 * Withdrawn keys keep their objects as they were, for their request pages. Returns how many were revoked.
 * `customerId` is the owner who replaced the controller, for the barrier's history; an operator passes none.
 */
export async function revokeKeysWithoutObjects(
  trx: Transaction<DB>,
  input: { deviceId: string; now: Date; customerId?: number },
): Promise<number> {
  const standing = trx
    .selectFrom('keys')
    .select('id')
    .where('device_id', '=', input.deviceId)
    .where('revoked_at', 'is', null);
  const current = trx
    .selectFrom('device_objects')
    .select('id')
    .where('device_id', '=', input.deviceId)
    .where('removed_at', 'is', null);
  await trx
    .deleteFrom('key_objects')
    .where('key_id', 'in', standing)
    .where('object_id', 'not in', current)
    .execute();
  const empty = await trx
    .selectFrom('keys')
    .selectAll()
    .where('device_id', '=', input.deviceId)
    .where('revoked_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('key_objects').select('key_id').whereRef('key_objects.key_id', '=', 'keys.id'))),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
  for (const key of empty) await revokeLockedKey(trx, key, { now: input.now, by: input.customerId ?? null });
  return empty.length;
}

/**
 * Revokes a key whose row the transaction holds, and its request, with the event and the line in the barrier's
 * history; once. `by`: the customer who withdrew it, null when none of the barrier's customers did.
 */
async function revokeLockedKey(
  trx: Transaction<DB>,
  key: Selectable<KeysTable>,
  { now, by }: { now: Date; by: number | null },
): Promise<AccessRequest> {
  if (key.revoked_at) {
    return trx.selectFrom('requests').selectAll().where('id', '=', key.request_id).executeTakeFirstOrThrow();
  }
  await trx.updateTable('keys').set({ revoked_at: now }).where('id', '=', key.id).execute();
  await recordAccessAct(trx, { act: 'withdrawn', key, customerId: by, at: now });
  const revoked = await trx
    .updateTable('requests')
    .set({ state: 'revoked', revoked_at: now })
    .where('id', '=', key.request_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await enqueueEvent(trx, {
    companyId: revoked.company_id,
    type: 'request.revoked',
    at: now,
    data: requestRevoked(revoked, key.id, now),
  });
  return revoked;
}
