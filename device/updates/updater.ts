import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SigningKey, VerifyKey } from '../../shared/crypto/ed25519.js';
import {
  type UpdateCommand,
  type UpdateReason,
  type UpdateReport,
  updateCommandSchema,
} from '../../shared/protocol/updates.js';
import {
  linkTarget,
  readUpdateRecord,
  switchLink,
  type UpdateRecord,
  writeUpdateRecord,
} from '../boot/home-layout.js';
import { checkUpdateCommand } from './checks.js';
import { DownloadError, downloadBundle } from './download.js';
import type { HealthProbe } from './health.js';
import { completeRelease, pruneReleases, releaseName, removeLeftovers } from './release-home.js';
import { type BundleError, checkReleaseFile, syncTree, unpackBundle } from './unpack.js';

/** Runs `fn` after `ms`; returns what cancels it. Injected by tests, so that no test waits on a real timer. */
export type Schedule = (ms: number, fn: () => void) => () => void;

export const realSchedule: Schedule = (ms, fn) => {
  const timer = setTimeout(fn, ms);
  timer.unref?.();
  return () => clearTimeout(timer);
};

export interface UpdaterOptions {
  /** The installed home (/opt/gatelink), from the boot guard; null outside one: updates are refused. */
  home: string | null;
  deviceId: string;
  commandKey: VerifyKey;
  releaseKey: VerifyKey | null;
  deviceKey: SigningKey;
  cloudUrl: string;
  ca?: string;
  version: string;
  arch: string;
  nodeAbi: string;
  healthTimeoutMs: number;
  probe: HealthProbe;
  now: () => number;
  schedule?: Schedule;
  /** Refuses new openings (busy) and resolves once none runs. */
  holdCommands: () => Promise<void>;
  resumeCommands: () => void;
  /** The latest report, for the retained state; resolves once published (or not connected). */
  report: (report: UpdateReport) => Promise<void>;
  /** Stops the controller cleanly (outputs released) and exits, for systemd to start `current`. */
  restart: () => void;
  log: (line: string) => void;
}

class UpdateFailure extends Error {
  constructor(
    readonly reason: UpdateReason,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * Updates over the air on the controller (docs/design.md section 12.4.3): takes an `update` command after its
 * checks, waits for openings to finish, downloads and unpacks the release beside the running one, switches
 * `current` and restarts; on the next start, keeps the release only if it comes up healthy in time.
 */
export class Updater {
  readonly #o: UpdaterOptions;
  readonly #schedule: Schedule;
  #updating = false;
  #cancel: (() => void)[] = [];
  /** The release on trial, until it is kept or rolled back. */
  #trial: { home: string; record: UpdateRecord } | null = null;

  constructor(options: UpdaterOptions) {
    this.#o = options;
    this.#schedule = options.schedule ?? realSchedule;
  }

  /** Reports the last update from update.json; a release on trial starts its health watch. */
  async start(): Promise<void> {
    const home = this.#o.home;
    if (home === null) return;
    const record = readUpdateRecord(home);
    if (!record) return;
    if (record.phase === 'trial' && linkTarget(home, 'current') === record.to) {
      this.#reportRecord(record, 'switched');
      this.#watchHealth(home, record);
      this.checkHealth();
    } else if (record.phase !== 'trial') {
      this.#reportRecord(record, record.phase);
    }
  }

  async stop(): Promise<void> {
    this.#trial = null;
    for (const cancel of this.#cancel.splice(0)) cancel();
  }

  /** Handles a payload of the `cmd` topic whose action is `update`. */
  async handle(payload: unknown): Promise<void> {
    const parsed = updateCommandSchema.safeParse(payload);
    if (!parsed.success) {
      this.#o.log('update: dropped a payload that is not a valid update command');
      return;
    }
    const command = parsed.data;
    const o = this.#o;
    if (this.#alreadyDone(command)) {
      o.log(
        `update: ${command.release.manifest.version} of rollout ${command.rollout_id} already ran; ignored`,
      );
      return;
    }
    const reason =
      checkUpdateCommand(command, { ...o, updating: this.#updating, received: o.now() }) ??
      (o.home === null ? 'not_updatable' : null);
    if (reason) {
      o.log(`update: refused ${command.release.manifest.version}: ${reason}`);
      this.#report(command, 'refused', reason);
      return;
    }
    if (o.home === null) return;
    this.#updating = true;
    try {
      await this.#install(o.home, command);
    } catch (error) {
      const failure =
        error instanceof UpdateFailure
          ? error
          : new UpdateFailure('download_failed', error instanceof Error ? error.message : String(error));
      o.log(`update: ${command.release.manifest.version} failed: ${failure.reason} ${failure.message}`);
      this.#report(command, 'failed', failure.reason, failure.message);
      o.resumeCommands();
      this.#updating = false;
    }
  }

  /**
   * The same rollout's release sent again once it ran (kept, or rolled back): answering it again would replace
   * the report the cloud counts, and installing a rolled-back release again would crash the same way.
   */
  #alreadyDone(command: UpdateCommand): boolean {
    const home = this.#o.home;
    const record = home === null ? null : readUpdateRecord(home);
    return (
      record !== null &&
      record.rollout_id === command.rollout_id &&
      record.version === command.release.manifest.version &&
      (record.phase === 'healthy' || record.phase === 'rolled_back')
    );
  }

  async #install(home: string, command: UpdateCommand): Promise<void> {
    const o = this.#o;
    const manifest = command.release.manifest;
    const name = releaseName(manifest.version, manifest.sha256);
    const releases = join(home, 'releases');
    const bundle = join(releases, `${name}.tgz.partial`);
    const partial = join(releases, `${name}.partial`);
    this.#report(command, 'downloading');
    // The gate keeps opening while the release downloads and unpacks beside the running one: only the switch
    // waits for the opening in progress, and refuses new ones (busy) until the restart.
    removeLeftovers(home);
    try {
      const sha256 = await downloadBundle({
        url: command.url,
        deviceId: o.deviceId,
        deviceKey: o.deviceKey,
        file: bundle,
        size: manifest.size,
        ca: o.ca,
        now: o.now,
      }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOSPC') throw new UpdateFailure('no_space', error.message);
        throw new UpdateFailure('download_failed', error.message);
      });
      if (sha256 !== manifest.sha256) throw new UpdateFailure('hash_mismatch', `got ${sha256.slice(0, 12)}`);
      await unpackBundle(bundle, partial).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOSPC') throw new UpdateFailure('no_space', error.message);
        throw new UpdateFailure('bad_bundle', error.message);
      });
      try {
        checkReleaseFile(partial, manifest);
      } catch (error) {
        throw new UpdateFailure('bad_bundle', (error as BundleError).message);
      }
      syncTree(partial);
      completeRelease(home, name);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      throw error instanceof DownloadError ? new UpdateFailure('download_failed', error.message) : error;
    } finally {
      rmSync(bundle, { force: true });
    }
    await o.holdCommands();
    this.#switch(home, command, name);
  }

  /** update.json first, then `current`: a stop between them leaves the old release running (the guard sees it). */
  #switch(home: string, command: UpdateCommand, name: string): void {
    const o = this.#o;
    const from = linkTarget(home, 'current') ?? '';
    writeUpdateRecord(home, {
      v: 1,
      phase: 'trial',
      rollout_id: command.rollout_id,
      version: command.release.manifest.version,
      from,
      to: name,
      starts: 0,
      at: o.now(),
    });
    switchLink(home, 'current', name);
    o.log(`update: current -> releases/${name}; restarting into it`);
    // Restarted once the report is out: the cloud learns of the switch before the device goes offline.
    void this.#report(command, 'switched').finally(() => o.restart());
  }

  /**
   * Called when the controller's health may have changed (its start finished, the session connected): a
   * release on trial that is healthy now is kept.
   */
  checkHealth(): void {
    const trial = this.#trial;
    const probe = this.#o.probe;
    if (!trial || !probe.connected() || !probe.driversStarted() || !probe.selfCheck()) return;
    this.#trial = null;
    for (const cancel of this.#cancel.splice(0)) cancel();
    this.#keep(trial.home, trial.record);
  }

  #watchHealth(home: string, record: UpdateRecord): void {
    this.#trial = { home, record };
    this.#cancel.push(
      this.#schedule(this.#o.healthTimeoutMs, () => {
        if (!this.#trial) return;
        this.#trial = null;
        this.#rollBack(home, record);
      }),
    );
  }

  #keep(home: string, record: UpdateRecord): void {
    switchLink(home, 'known-good', record.to);
    const healthy: UpdateRecord = { ...record, phase: 'healthy', at: this.#o.now() };
    writeUpdateRecord(home, healthy);
    pruneReleases(home, record.from);
    this.#o.log(`update: ${record.version} is healthy; known-good -> releases/${record.to}`);
    this.#reportRecord(healthy, 'healthy');
  }

  #rollBack(home: string, record: UpdateRecord): void {
    const back = linkTarget(home, 'known-good') ?? record.from;
    switchLink(home, 'current', back);
    const rolledBack: UpdateRecord = {
      ...record,
      phase: 'rolled_back',
      reason: 'not_healthy',
      detail: `${record.version} was not healthy within ${Math.round(this.#o.healthTimeoutMs / 1000)} s`,
      at: this.#o.now(),
    };
    writeUpdateRecord(home, rolledBack);
    this.#o.log(`update: ${rolledBack.detail}; current -> releases/${back}`);
    void this.#reportRecord(rolledBack, 'rolled_back').finally(() => this.#o.restart());
  }

  #reportRecord(record: UpdateRecord, state: UpdateReport['state']): Promise<void> {
    return this.#o.report({
      rollout_id: record.rollout_id,
      version: record.version,
      state,
      ...(record.reason ? { reason: record.reason } : {}),
      ...(record.detail ? { detail: record.detail.slice(0, 300) } : {}),
      at: record.at,
    });
  }

  #report(
    command: UpdateCommand,
    state: UpdateReport['state'],
    reason?: UpdateReason,
    detail?: string,
  ): Promise<void> {
    return this.#o.report({
      rollout_id: command.rollout_id,
      version: command.release.manifest.version,
      state,
      ...(reason ? { reason } : {}),
      ...(detail ? { detail: detail.slice(0, 300) } : {}),
      at: this.#o.now(),
    });
  }
}
