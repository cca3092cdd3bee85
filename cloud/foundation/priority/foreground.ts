/**
 * Work someone is waiting on, which background work gives way to (docs/design.md section 7.5). An opening is
 * foreground: a courier stands at the gate until the controller's acknowledgement comes back. Applying a
 * controller's position reports is background: nobody waits on it, and a gate's position reaching the
 * customer's page a second or two later under load goes unseen. On a small machine the two share the cores
 * (and on PGlite one thread), so background work waits for a quiet moment: no opening under way, and none
 * begun for QUIET_MS; under a load that never pauses it waits at most its own `maxWaitMs`, then goes anyway,
 * so that it is late but never lost.
 */
export const QUIET_MS = 20;

export class Foreground {
  readonly #now: () => number;
  #underWay = 0;
  /** When the last piece of foreground work began or ended (ms, on `now`). */
  #lastActivity = Number.NEGATIVE_INFINITY;
  readonly #waiting = new Set<() => void>();
  #quietTimer: ReturnType<typeof setTimeout> | null = null;

  /** `now`: a monotonic clock in ms; tests give the fake timers' own. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Marks work begun; the function returned marks it done (calling it again does nothing). */
  begin(): () => void {
    this.#underWay++;
    this.#lastActivity = this.#now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#underWay--;
      this.#lastActivity = this.#now();
      this.#watch();
    };
  }

  /** Pieces of foreground work under way now. */
  get underWay(): number {
    return this.#underWay;
  }

  /** Resolves at the next quiet moment, or after `maxWaitMs` at the latest. */
  quiet(maxWaitMs: number): Promise<void> {
    if (this.#isQuiet()) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = () => {
        clearTimeout(latest);
        this.#waiting.delete(settle);
        resolve();
      };
      const latest = setTimeout(settle, maxWaitMs);
      this.#waiting.add(settle);
      this.#watch();
    });
  }

  #isQuiet(): boolean {
    return this.#underWay === 0 && this.#now() - this.#lastActivity >= QUIET_MS;
  }

  /** While someone waits and nothing is under way, looks again once QUIET_MS has passed since the last activity. */
  #watch(): void {
    if (this.#waiting.size === 0 || this.#underWay > 0 || this.#quietTimer) return;
    const left = Math.max(0, QUIET_MS - (this.#now() - this.#lastActivity));
    this.#quietTimer = setTimeout(() => {
      this.#quietTimer = null;
      if (this.#isQuiet()) for (const settle of [...this.#waiting]) settle();
      else this.#watch();
    }, left);
  }
}
