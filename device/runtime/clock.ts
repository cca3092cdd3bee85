import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';

/** Answers whether the system clock is synchronised to a time source; false when it cannot tell. */
export type ClockProbe = () => Promise<boolean>;

export type ClockCheck = 'timedatectl' | 'timesyncd' | 'none';

/**
 * The probes the config can name:
 * - `timedatectl`: `timedatectl show -p NTPSynchronized --value` says `yes` (systemd; the kernel's adjtimex
 *   state, whichever NTP client sets it: timesyncd, chrony or ntpd).
 * - `timesyncd`: systemd-timesyncd has created /run/systemd/timesync/synchronized (it does once synced).
 * - `none`: the clock is trusted; for development machines only.
 */
export function clockProbe(check: ClockCheck): ClockProbe {
  switch (check) {
    case 'timedatectl':
      return () =>
        new Promise((resolve) => {
          execFile(
            'timedatectl',
            ['show', '-p', 'NTPSynchronized', '--value'],
            { timeout: 5000 },
            (error, out) => resolve(!error && out.trim() === 'yes'),
          );
        });
    case 'timesyncd':
      return () =>
        access('/run/systemd/timesync/synchronized').then(
          () => true,
          () => false,
        );
    case 'none':
      return async () => true;
  }
}

/**
 * How to check and fix a clock that is not synchronised, for the check the config names (hardware/README.md,
 * step 3 of "From a fresh Raspberry Pi OS to a provisioned controller"): printed with every "not synchronised".
 */
export function clockAdvice(check: ClockCheck): string {
  switch (check) {
    case 'timedatectl':
      return (
        'check with: timedatectl show -p NTPSynchronized --value (yes once synchronised); fix with: ' +
        'sudo timedatectl set-ntp true and network access to an NTP server; where timedatectl is missing ' +
        '(no systemd) or on a development machine, set clock: check: none in the config (development only)'
      );
    case 'timesyncd':
      return (
        'check with: ls /run/systemd/timesync/synchronized (it exists once synchronised); fix with: ' +
        'sudo systemctl enable --now systemd-timesyncd and network access to an NTP server'
      );
    case 'none':
      return 'clock: check: none trusts the clock as it is';
  }
}

export interface ClockMonitorOptions {
  probe: ClockProbe;
  /** Said after "not synchronised" (`clockAdvice`). */
  advice?: string;
  intervalMs: number;
  now: () => number;
  onChange?: (synced: boolean) => void;
  log?: (line: string) => void;
}

/**
 * Keeps the answer of the clock probe at hand, re-checked every `intervalMs`. A controller whose clock is not
 * synchronised cannot judge `expires_at`, so it refuses commands with `clock_unsynced` (docs/design.md section 7).
 * Until the first answer the clock counts as not synchronised.
 *
 * It also keeps `trustedSince`: the time, read from the synchronised clock, at which this run first found it
 * synchronised. Every command that an earlier run could have executed was issued before it, so commands issued
 * before it are refused as `stale`, and the ids executed need no record on disk (./executed.ts). Taken from the
 * synchronised clock, not at process start: a Raspberry Pi has no battery-backed clock, and boots with the
 * time it saved last, which after a power cut is earlier than the commands it ran before the cut. This assumes
 * what the clock check stands for: the cloud's clock and the controller's agree to much better than the time
 * a restart takes (seconds).
 */
export class ClockMonitor {
  readonly #options: ClockMonitorOptions;
  #synced = false;
  #trustedSince: number | null = null;
  #checked = false;
  #timer: ReturnType<typeof setInterval> | null = null;
  readonly #trustListeners = new Set<() => void>();

  constructor(options: ClockMonitorOptions) {
    this.#options = options;
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** When this run first found the clock synchronised (Unix ms), or null until it does. */
  get trustedSince(): number | null {
    return this.#trustedSince;
  }

  /**
   * Calls `listener` once the clock is first found synchronised in this run (at once if it was); the position
   * reports wait for it (docs/design.md section 12.5). Returns the function that removes it.
   */
  whenTrusted(listener: () => void): () => void {
    if (this.#trustedSince !== null) {
      listener();
      return () => undefined;
    }
    this.#trustListeners.add(listener);
    return () => this.#trustListeners.delete(listener);
  }

  async start(): Promise<void> {
    await this.check();
    this.#timer = setInterval(() => void this.check(), this.#options.intervalMs);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async check(): Promise<boolean> {
    const synced = await this.#options.probe().catch(() => false);
    // After the probe answered, never before: the clock may have been set while it ran.
    const trustedNow = synced && this.#trustedSince === null;
    if (trustedNow) this.#trustedSince = this.#options.now();
    const first = !this.#checked;
    this.#checked = true;
    if (synced !== this.#synced || first) {
      this.#synced = synced;
      const advice = this.#options.advice ? `; ${this.#options.advice}` : '';
      this.#options.log?.(
        synced ? 'clock: synchronised' : `clock: not synchronised; commands are refused${advice}`,
      );
      this.#options.onChange?.(synced);
    }
    if (trustedNow) {
      const listeners = [...this.#trustListeners];
      this.#trustListeners.clear();
      for (const listener of listeners) listener();
    }
    return synced;
  }
}
