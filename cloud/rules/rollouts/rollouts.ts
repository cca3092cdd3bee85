import { sql } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DeviceUpdateState, RolloutState } from '../../foundation/db/schema.js';
import { getRelease } from '../releases/releases.js';
import { inPercent, type RolloutTarget } from './targeting.js';

/**
 * Rollouts (docs/design.md section 12.4.2): which controllers are to take a release. The targeted controllers
 * are fixed when the rollout starts, one `device_updates` row each: those provisioned whose reported arch is
 * the release's (a controller that has not reported its arch, or reports another, is not targeted), and for a
 * percentage those the stable hash picks. Delivery (update-delivery.ts) sends only while the rollout runs.
 */
export const DEFAULT_MAX_ROLLBACK_SHARE = 0.2;

export interface RolloutInput {
  releaseId: number;
  target: RolloutTarget;
  allowDowngrade: boolean;
  maxRollbackShare: number;
}

export interface RolloutView {
  id: number;
  release_id: number;
  version: string;
  arch: string;
  target: RolloutTarget | { percent: number };
  allow_downgrade: boolean;
  max_rollback_share: number;
  state: RolloutState;
  halted_reason: string | null;
  created_at: string;
  /** How many targeted controllers are in each update state. */
  counts: Partial<Record<DeviceUpdateState, number>>;
  targeted: number;
}

export interface DeviceUpdateView {
  device_id: string;
  label: string;
  state: DeviceUpdateState;
  reason: string | null;
  detail: string | null;
  sent_at: string | null;
  updated_at: string;
}

export async function startRollout(
  ctx: CloudContext,
  input: RolloutInput,
): Promise<{ rollout: RolloutView; not_targeted: { device_id: string; reason: string }[] }> {
  const release = await getRelease(ctx, input.releaseId);
  const candidates = await ctx.db
    .selectFrom('devices')
    .select(['id', 'arch'])
    .where('provisioned_at', 'is not', null)
    .$if(typeof input.target === 'object' && 'devices' in input.target, (query) =>
      query.where('id', 'in', deviceList(input.target)),
    )
    .execute();
  const named = deviceList(input.target);
  const unknown = named.filter((id) => !candidates.some((device) => device.id === id));
  if (unknown.length > 0) {
    throw new ApiError('invalid_field', {
      field: 'target',
      message: `No provisioned controller ${unknown.join(', ')}.`,
    });
  }
  const notTargeted = candidates
    .filter((device) => device.arch !== release.arch)
    .map((device) => ({
      device_id: device.id,
      reason: device.arch ? `arch ${device.arch}, not ${release.arch}` : 'arch not reported yet',
    }));
  const id = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('rollouts')
      .values({
        release_id: release.id,
        target_kind: targetKind(input.target),
        percent: typeof input.target === 'object' && 'percent' in input.target ? input.target.percent : null,
        allow_downgrade: input.allowDowngrade,
        max_rollback_share: input.maxRollbackShare,
        state: 'running',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const targeted = candidates
      .filter((device) => device.arch === release.arch)
      .filter((device) => {
        const { target } = input;
        return (
          !(typeof target === 'object' && 'percent' in target) || inPercent(row.id, device.id, target.percent)
        );
      });
    if (targeted.length > 0) {
      await trx
        .insertInto('device_updates')
        .values(
          targeted.map((device) => ({ rollout_id: row.id, device_id: device.id, state: 'pending' as const })),
        )
        .execute();
    }
    return row.id;
  });
  return { rollout: await getRollout(ctx, id), not_targeted: notTargeted };
}

function deviceList(target: RolloutTarget): string[] {
  return typeof target === 'object' && 'devices' in target ? target.devices : [];
}

function targetKind(target: RolloutTarget): 'all' | 'percent' | 'devices' {
  if (target === 'all') return 'all';
  return 'percent' in target ? 'percent' : 'devices';
}

function rolloutQuery(ctx: CloudContext) {
  return ctx.db
    .selectFrom('rollouts')
    .innerJoin('releases', 'releases.id', 'rollouts.release_id')
    .select([
      'rollouts.id',
      'rollouts.release_id',
      'releases.version',
      'releases.arch',
      'rollouts.target_kind',
      'rollouts.percent',
      'rollouts.allow_downgrade',
      'rollouts.max_rollback_share',
      'rollouts.state',
      'rollouts.halted_reason',
      'rollouts.created_at',
    ]);
}

type RolloutRow = Awaited<ReturnType<ReturnType<typeof rolloutQuery>['executeTakeFirstOrThrow']>>;

async function stateCounts(ctx: CloudContext, ids: number[]) {
  if (ids.length === 0) return [];
  return ctx.db
    .selectFrom('device_updates')
    .select(['rollout_id', 'state', sql<string>`count(*)`.as('count')])
    .where('rollout_id', 'in', ids)
    .groupBy(['rollout_id', 'state'])
    .execute();
}

function view(row: RolloutRow, counts: { rollout_id: number; state: DeviceUpdateState; count: string }[]) {
  const mine = counts.filter((count) => count.rollout_id === row.id);
  const target: RolloutView['target'] =
    row.target_kind === 'percent'
      ? { percent: row.percent ?? 0 }
      : row.target_kind === 'devices'
        ? { devices: [] }
        : 'all';
  return {
    id: row.id,
    release_id: row.release_id,
    version: row.version,
    arch: row.arch,
    target,
    allow_downgrade: row.allow_downgrade,
    max_rollback_share: row.max_rollback_share,
    state: row.state,
    halted_reason: row.halted_reason,
    created_at: row.created_at.toISOString(),
    counts: Object.fromEntries(mine.map((count) => [count.state, Number(count.count)])),
    targeted: mine.reduce((sum, count) => sum + Number(count.count), 0),
  } satisfies RolloutView;
}

export async function getRollout(ctx: CloudContext, id: number): Promise<RolloutView> {
  const row = await rolloutQuery(ctx).where('rollouts.id', '=', id).executeTakeFirst();
  if (!row) throw new ApiError('not_found', { message: `No rollout ${id}.` });
  const shown = view(row, await stateCounts(ctx, [id]));
  if (row.target_kind === 'devices')
    shown.target = { devices: (await rolloutDevices(ctx, id)).map((d) => d.device_id) };
  return shown;
}

export async function listRollouts(ctx: CloudContext): Promise<RolloutView[]> {
  const rows = await rolloutQuery(ctx).orderBy('rollouts.id', 'desc').limit(200).execute();
  const counts = await stateCounts(
    ctx,
    rows.map((row) => row.id),
  );
  return rows.map((row) => view(row, counts));
}

/** Each targeted controller's progress in a rollout. */
export async function rolloutDevices(ctx: CloudContext, id: number): Promise<DeviceUpdateView[]> {
  const rows = await ctx.db
    .selectFrom('device_updates')
    .innerJoin('devices', 'devices.id', 'device_updates.device_id')
    .select([
      'device_updates.device_id',
      'devices.label',
      'device_updates.state',
      'device_updates.reason',
      'device_updates.detail',
      'device_updates.sent_at',
      'device_updates.updated_at',
    ])
    .where('device_updates.rollout_id', '=', id)
    .orderBy('device_updates.device_id')
    .execute();
  return rows.map((row) => ({
    ...row,
    sent_at: row.sent_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  }));
}

/** Pauses a running rollout: nothing more is sent until it resumes. */
export async function pauseRollout(ctx: CloudContext, id: number): Promise<RolloutView> {
  return moveRollout(ctx, id, 'running', 'paused');
}

/** Resumes a paused rollout; a halted one stays halted (start a new rollout after looking into why). */
export async function resumeRollout(ctx: CloudContext, id: number): Promise<RolloutView> {
  return moveRollout(ctx, id, 'paused', 'running');
}

async function moveRollout(
  ctx: CloudContext,
  id: number,
  from: RolloutState,
  to: RolloutState,
): Promise<RolloutView> {
  const current = await getRollout(ctx, id);
  if (current.state === to) return current;
  const moved = await ctx.db
    .updateTable('rollouts')
    .set({ state: to, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .where('state', '=', from)
    .executeTakeFirst();
  if (moved.numUpdatedRows === 0n) {
    throw new ApiError('invalid_state', {
      message: `Rollout ${id} is ${current.state}: it cannot become ${to}.`,
    });
  }
  return getRollout(ctx, id);
}
