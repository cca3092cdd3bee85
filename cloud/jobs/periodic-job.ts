import type { FastifyBaseLogger } from 'fastify';
import type { DatabaseOutage } from '../foundation/db/database-outage.js';

/**
 * A background task run every `intervalMs`, never overlapping itself, stopped cleanly: `stop()` waits for a
 * run in progress so that the database is not closed under it.
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

  constructor(options: {
    name: string;
    intervalMs: number;
    run: () => Promise<unknown>;
    log: FastifyBaseLogger;
    /** Where a tick that could not reach the database is counted, rather than logged on its own. */
    outage?: DatabaseOutage;
  }) {
    this.#outage = options.outage;
    this.#name = options.name;
    this.#intervalMs = options.intervalMs;
    this.#run = options.run;
    this.#log = options.log;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick().finally(() => {
        this.#running = null;
        this.#schedule(this.#intervalMs);
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
