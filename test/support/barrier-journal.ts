import type { Insertable } from 'kysely';
import type { AssembledContext } from '../../cloud/context.js';
import type { JournalTable } from '../../cloud/foundation/db/schema.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import type { EntryOutcome } from '../../cloud/rules/journal/entry-outcome.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { createRequest } from '../../cloud/rules/requests/requests.js';
import { newDeviceId } from './fake-device.js';

/**
 * What the journal's suites and benchmark stand on: a customer's barrier with objects, companies holding keys
 * granted the way a customer grants them, and journal entries written straight to the database (the open flow
 * that writes them has suites of its own).
 */
export interface JournalBarrier {
  deviceId: string;
  name: string;
  objects: { id: number; label: string }[];
}

export interface KeyHolder {
  companyId: number;
  name: string;
  keyRef: number;
}

/** A barrier of `customerId`, with objects of these labels, as pairing leaves it. */
export async function journalBarrier(
  ctx: AssembledContext,
  customerId: number,
  name: string,
  labels = ['Main gate', 'Side door'],
): Promise<JournalBarrier> {
  const deviceId = newDeviceId();
  await ctx.db
    .insertInto('devices')
    .values({
      id: deviceId,
      label: 'Installer label',
      name,
      customer_id: customerId,
      created_at: ctx.clock.now(),
      paired_at: ctx.clock.now(),
    })
    .execute();
  const objects = await ctx.db
    .insertInto('device_objects')
    .values(labels.map((label, i) => ({ device_id: deviceId, local_id: `out${i}`, label, kind: 'relay' })))
    .returning(['id', 'label'])
    .execute();
  return { deviceId, name, objects };
}

/**
 * An approved company, with a verified domain when `domain` is given (its key pinned), holding a key that
 * `customerId` granted on the barrier's objects.
 */
export async function keyHolder(
  ctx: AssembledContext,
  input: { customerId: number; barrier: JournalBarrier; name: string; domain?: string },
): Promise<KeyHolder> {
  const company = await ctx.db
    .insertInto('companies')
    .values({
      name: input.name,
      domain: input.domain ?? null,
      status: 'approved',
      key_pub: input.domain ? 'pinned-key-of-the-test' : null,
      created_at: ctx.clock.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const keyRef = await grantKey(ctx, { ...input, companyId: company.id });
  return { companyId: company.id, name: input.name, keyRef };
}

/** A key `customerId` grants `companyId` on the barrier: a request created, claimed and issued. */
export async function grantKey(
  ctx: AssembledContext,
  input: { customerId: number; barrier: JournalBarrier; companyId: number },
): Promise<number> {
  const request = await ctx.db
    .transaction()
    .execute((trx) =>
      createRequest(trx, { companyId: input.companyId, ref: undefined, ttlHours: 24, now: ctx.clock.now() }),
    );
  await claimRequest(ctx, { code: request.code, customerId: input.customerId });
  const { keyRef } = await issueAccessKey(ctx, {
    code: request.code,
    customerId: input.customerId,
    deviceId: input.barrier.deviceId,
    objectIds: input.barrier.objects.map((object) => object.id),
    keyExpiresAt: null,
  });
  return keyRef;
}

export interface EntryInput {
  holder: KeyHolder;
  actor?: string;
  outcome?: EntryOutcome;
  detail?: string | null;
  at?: Date;
  /** Index into the barrier's objects; the first unless told. */
  object?: number;
}

/** Journal entries of the barrier, in the order given (ids rising); returns their ids. */
export async function insertEntries(
  ctx: AssembledContext,
  barrier: JournalBarrier,
  entries: EntryInput[],
): Promise<number[]> {
  if (entries.length === 0) return [];
  const base = ctx.clock.now().getTime();
  const ids: number[] = [];
  // Inserted in slices: one statement's parameters stay well under the protocol's limit.
  for (let start = 0; start < entries.length; start += 1000) {
    const rows = entries.slice(start, start + 1000).map((entry, i) => {
      const outcome = entry.outcome ?? 'opened';
      const at = entry.at ?? new Date(base - (entries.length - start - i) * 1000);
      const row: Insertable<JournalTable> = {
        at,
        device_id: barrier.deviceId,
        object_id: barrier.objects[entry.object ?? 0]!.id,
        company_id: entry.holder.companyId,
        key_id: entry.holder.keyRef,
        actor: entry.actor ?? 'Driver 7',
        outcome: outcome === 'pending' ? null : outcome,
        detail: entry.detail ?? null,
        command_id: null,
        acked_at: outcome === 'opened' ? at : null,
      };
      return row;
    });
    const inserted = await ctx.db.insertInto('journal').values(rows).returning('id').execute();
    ids.push(...inserted.map((row) => row.id));
  }
  return ids;
}
