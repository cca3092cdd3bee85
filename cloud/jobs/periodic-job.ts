import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { DatabaseOutage } from '../foundation/db/database-outage.js';

/**
 * A background task run every `intervalMs`, never overlapping itself, stopped cleanly: `stop()` waits for a
 * run in progress so that the database is not closed under it. `wake()` runs it sooner, for a job told there is
 * work (a database notification), the interval staying as the safety net.
 */
export class PeriodicJob {
  readonly #name: string;
  readonly #intervalMs: number;
  readonly #run: () => Promise<unknown>;
  readonly #log: FastifyBaseLogger;
  readonly #outage: DatabaseOutage | undefined;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;
  readonly #wakeGapMs: number;
  #lastStart = Number.NEGATIVE_INFINITY;
  /** A wake came during a run: the next run follows it rather than the interval. */
  #again = false;
  readonly #firstAfterInterval: boolean;

  constructor(options: {
    name: string;
    intervalMs: number;
    run: () => Promise<unknown>;
    log: FastifyBaseLogger;
    /** Where a tick that could not reach the database is counted, rather than logged on its own. */
    outage?: DatabaseOutage;
    /** Runs woken by `wake()` begin at least this far apart, so that a stream of wakes costs one run per gap. */
    wakeGapMs?: number;
    /** The first run waits a whole interval rather than starting at once, for work that a fresh start has none of. */
    firstAfterInterval?: boolean;
  }) {
    this.#wakeGapMs = options.wakeGapMs ?? 0;
    this.#firstAfterInterval = options.firstAfterInterval ?? false;
    this.#outage = options.outage;
    this.#name = options.name;
    this.#intervalMs = options.intervalMs;
    this.#run = options.run;
    this.#log = options.log;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(this.#firstAfterInterval ? this.#intervalMs : 0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** Runs now, or right after the run in progress, or once `wakeGapMs` has passed since the last run began. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#schedule(this.#untilGapEnds());
  }

  #untilGapEnds(): number {
    return Math.max(0, this.#lastStart + this.#wakeGapMs - performance.now());
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#lastStart = performance.now();
      this.#running = this.#tick().finally(() => {
        this.#running = null;
        const woken = this.#again;
        this.#again = false;
        this.#schedule(woken ? this.#untilGapEnds() : this.#intervalMs);
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      await this.#run();
      this.#outage?.answered();
    } catch (error) {
      if (this.#outage?.failed(error, `job ${this.#name}`)) return;
      this.#log.error(
        { err: error, job: this.#name },
        'background job failed; it runs again at its next interval',
      );
    }
  }
}
