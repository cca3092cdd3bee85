import { randomUUID } from 'node:crypto';
import {
  signUpdateCommand,
  UPDATE_COMMAND_LIFETIME_MS,
  type UpdateCommand,
} from '../../../shared/protocol/updates.js';
import { PROTOCOL_VERSION } from '../../../shared/protocol/version.js';
import type { CloudContext } from '../../foundation/context.js';
import { releaseManifest } from '../releases/releases.js';
import { markAlreadyThere } from './update-reports.js';

/** What delivery needs of the controller link: publish a command on a connected controller's `cmd` topic. */
export interface UpdateSender {
  /** False when the controller has no session (nothing was sent). */
  sendUpdate(command: UpdateCommand): Promise<boolean>;
}

export interface UpdateDeliveryOptions {
  /** How long a `sent` controller may stay without a report before the command goes again; default 5 min. */
  resendAfterMs?: number;
}

export const DEFAULT_RESEND_AFTER_MS = 5 * 60_000;

/**
 * Sends running rollouts' update commands (docs/design.md section 12.4.2) to their online controllers still
 * `pending`, or `sent` without a report for resendAfterMs. A controller whose reported version already is the
 * release's is marked healthy without a command. Paused, halted and finished rollouts send nothing.
 */
export class UpdateDelivery {
  readonly #ctx: CloudContext;
  readonly #sender: () => UpdateSender;
  readonly #resendAfterMs: number;

  /** `sender` is asked for at each delivery: the link that carries commands is made after this. */
  constructor(ctx: CloudContext, sender: () => UpdateSender, options: UpdateDeliveryOptions = {}) {
    this.#ctx = ctx;
    this.#sender = sender;
    this.#resendAfterMs = options.resendAfterMs ?? DEFAULT_RESEND_AFTER_MS;
  }

  /** Every due controller of every running rollout; returns how many commands went out. */
  deliverDue(): Promise<number> {
    return this.#deliver(undefined);
  }

  /** A controller that just came online: its due updates at once. */
  deliverTo(deviceId: string): Promise<number> {
    return this.#deliver(deviceId);
  }

  async #deliver(deviceId: string | undefined): Promise<number> {
    const ctx = this.#ctx;
    const resendBefore = new Date(ctx.clock.now().getTime() - this.#resendAfterMs);
    const due = await ctx.db
      .selectFrom('device_updates')
      .innerJoin('rollouts', 'rollouts.id', 'device_updates.rollout_id')
      .innerJoin('releases', 'releases.id', 'rollouts.release_id')
      .innerJoin('devices', 'devices.id', 'device_updates.device_id')
      .select([
        'device_updates.rollout_id',
        'device_updates.device_id',
        'rollouts.release_id',
        'rollouts.allow_downgrade',
        'releases.version',
        'devices.version as device_version',
      ])
      .where('rollouts.state', '=', 'running')
      .where('devices.online', '=', true)
      .where((eb) =>
        eb.or([
          eb('device_updates.state', '=', 'pending'),
          eb.and([eb('device_updates.state', '=', 'sent'), eb('device_updates.sent_at', '<', resendBefore)]),
        ]),
      )
      .$if(deviceId !== undefined, (query) => query.where('device_updates.device_id', '=', deviceId ?? ''))
      .orderBy('device_updates.rollout_id')
      .limit(500)
      .execute();
    let sent = 0;
    for (const row of due) {
      if (row.device_version === row.version) {
        await markAlreadyThere(ctx, row.rollout_id, row.device_id);
        continue;
      }
      if (await this.#send(row)) sent += 1;
    }
    return sent;
  }

  async #send(row: {
    rollout_id: number;
    device_id: string;
    release_id: number;
    allow_downgrade: boolean;
  }): Promise<boolean> {
    const ctx = this.#ctx;
    const issuedAt = ctx.clock.now().getTime();
    const command = signUpdateCommand(ctx.serviceKey, {
      v: PROTOCOL_VERSION,
      id: randomUUID(),
      device_id: row.device_id,
      action: 'update',
      rollout_id: row.rollout_id,
      release: await releaseManifest(ctx, row.release_id),
      url: `${ctx.baseUrl()}/api/device/releases/${row.release_id}/bundle`,
      allow_downgrade: row.allow_downgrade,
      issued_at: issuedAt,
      expires_at: issuedAt + UPDATE_COMMAND_LIFETIME_MS,
    });
    if (!(await this.#sender().sendUpdate(command))) return false;
    // Only a row still waiting moves to `sent`: a report that came meanwhile stays.
    await ctx.db
      .updateTable('device_updates')
      .set({ state: 'sent', sent_at: new Date(issuedAt), updated_at: new Date(issuedAt) })
      .where('rollout_id', '=', row.rollout_id)
      .where('device_id', '=', row.device_id)
      .where('state', 'in', ['pending', 'sent'])
      .execute();
    return true;
  }
}
