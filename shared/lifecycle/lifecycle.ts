/**
 * A part of a program with a lifetime (the cloud's database, controller link and HTTP server; the daemon's
 * session and drivers; one driver of the driver set). `stop()` is called only after `start()` resolved.
 */
export interface Part {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A part that failed to stop, and why. */
export interface StopFailure {
  readonly part: string;
  readonly error: unknown;
}

/**
 * A part failed to start. The parts started before it were stopped in reverse first; those that failed to
 * stop are in `unwinding`. The part's own error is the `cause`.
 */
export class StartFailed extends Error {
  constructor(
    readonly part: string,
    cause: unknown,
    readonly unwinding: readonly StopFailure[],
  ) {
    super(`${part} failed to start: ${messageOf(cause)}`, { cause });
    this.name = 'StartFailed';
  }
}

/** One or more parts failed to stop; every other part was still stopped. */
export class StopFailed extends Error {
  constructor(readonly failures: readonly StopFailure[]) {
    super(
      `failed to stop: ${failures.map((failure) => `${failure.part} (${messageOf(failure.error)})`).join(', ')}`,
    );
    this.name = 'StopFailed';
  }
}

/**
 * Starts parts in the order given and stops them in reverse, so that nothing is stopped while a part started
 * after it still uses it. The one behaviour for the cloud (cloud/cloud.ts), the controller daemon
 * (device/runtime/controller.ts) and its drivers (device/drivers/driver-set.ts):
 * - `start()`: in order. If a part fails, the parts already started are stopped in reverse (past any that
 *   fail to stop) and a `StartFailed` naming the part is thrown.
 * - `stop()`: in reverse, continuing past a part whose stop throws, so that every part gets its chance to end
 *   safe; the failures are thrown together at the end as one `StopFailed`. A second `stop()` does nothing.
 */
export class Lifecycle {
  readonly #parts: readonly Part[];
  #started: Part[] = [];

  constructor(parts: readonly Part[]) {
    this.#parts = parts;
  }

  async start(): Promise<void> {
    for (const part of this.#parts) {
      try {
        await part.start();
      } catch (error) {
        throw new StartFailed(part.name, error, await this.#stopStarted());
      }
      this.#started.push(part);
    }
  }

  async stop(): Promise<void> {
    const failures = await this.#stopStarted();
    if (failures.length > 0) throw new StopFailed(failures);
  }

  async #stopStarted(): Promise<StopFailure[]> {
    const started = this.#started.reverse();
    this.#started = [];
    const failures: StopFailure[] = [];
    for (const part of started) {
      try {
        await part.stop();
      } catch (error) {
        failures.push({ part: part.name, error });
      }
    }
    return failures;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
