/**
 * How long the external transport stays away from the broker after the cloud could not take a message, so that a
 * message failing again and again (the database is down) costs one attempt per delay instead of a busy loop.
 */
export interface RedeliveryDelays {
  /** After the first refusal in a row. */
  firstMs: number;
  /** The longest wait, reached by doubling. */
  maxMs: number;
}

/**
 * Short at first (a write that failed once usually succeeds at once), doubling up to half a minute while the
 * database stays out of reach.
 */
export const REDELIVERY_DELAYS: RedeliveryDelays = { firstMs: 200, maxMs: 30_000 };

/** Counts refusals in a row and turns them into the next delay; one message taken ends the run. */
export class RedeliveryBackoff {
  readonly #delays: RedeliveryDelays;
  #refusals = 0;

  constructor(delays: RedeliveryDelays) {
    this.#delays = delays;
  }

  /** Whether the last message ended in a refusal. */
  get refusing(): boolean {
    return this.#refusals > 0;
  }

  /** Counts one more refusal and answers how long to wait before the session resumes. */
  nextDelayMs(): number {
    const { firstMs, maxMs } = this.#delays;
    const delay = Math.min(maxMs, firstMs * 2 ** Math.min(this.#refusals, 30));
    this.#refusals++;
    return delay;
  }

  /** A message was taken: the next refusal starts again from the first delay. */
  reset(): void {
    this.#refusals = 0;
  }
}
