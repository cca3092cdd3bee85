import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory } from '../files.js';

export interface ExecutedIdsOptions {
  now: () => number;
  /**
   * How long an id is kept after its command's `expires_at`. Once a command has expired it is refused as
   * `expired` anyway; the margin covers clock corrections, so a replay is always refused by one of the two.
   */
  retentionMs?: number;
  /** Upper bound on remembered ids; the ones that expire first are forgotten first. */
  maxEntries?: number;
}

/** Expired ids are dropped at most this often (`has` checks the time anyway). */
const PRUNE_INTERVAL_MS = 1000;

/**
 * The ids of commands this run of the controller has executed, so that a command delivered twice (QoS 1) or
 * replayed is refused as `duplicate`. An id is recorded before the driver acts.
 *
 * In memory only, and no less safe for it: a command issued before this run could trust its clock is refused
 * as `stale` (see ClockMonitor.trustedSince), so every command a previous run may have executed, a power cut
 * mid-pulse included, is refused without a record on disk. What that saves is one durable write per opening,
 * on the opening's path: on an SD card, the slowest step of an opening after the pulse itself.
 */
export class ExecutedIds {
  readonly #options: Required<ExecutedIdsOptions>;
  /** id -> time until which it is kept (Unix ms). */
  readonly #entries = new Map<string, number>();
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: ExecutedIdsOptions) {
    this.#options = { retentionMs: 60 * 60_000, maxEntries: 10_000, ...options };
  }

  has(id: string): boolean {
    const until = this.#entries.get(id);
    return until !== undefined && until >= this.#options.now();
  }

  get size(): number {
    return this.#entries.size;
  }

  add(id: string, expiresAt: number): void {
    this.#entries.set(id, Math.max(expiresAt, this.#options.now()) + this.#options.retentionMs);
    this.#prune();
  }

  #prune(): void {
    const now = this.#options.now();
    if (now - this.#prunedAt >= PRUNE_INTERVAL_MS) {
      this.#prunedAt = now;
      for (const [id, until] of this.#entries) if (until < now) this.#entries.delete(id);
    }
    // Over the bound, one id at a time (one per command added): found by a scan that allocates nothing, where
    // sorting a copy of every entry at each command made garbage in proportion to the bound.
    while (this.#entries.size > this.#options.maxEntries) {
      let first: string | undefined;
      let soonest = Number.POSITIVE_INFINITY;
      for (const [id, until] of this.#entries) {
        if (until < soonest) {
          soonest = until;
          first = id;
        }
      }
      if (first === undefined) break;
      this.#entries.delete(first);
    }
  }
}

/** The files in which earlier versions kept executed ids on disk; `stale` now covers what they held. */
const EARLIER_RECORDS = ['executed.log', 'executed.json'];

/** Removes the executed ids that earlier versions kept in the state folder. */
export async function removeEarlierRecords(stateDir: string): Promise<void> {
  let removed = false;
  for (const name of EARLIER_RECORDS) {
    try {
      await rm(join(stateDir, name));
      removed = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (removed) await syncDirectory(stateDir);
}
