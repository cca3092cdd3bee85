import type { Position } from '../../shared/protocol/positions.js';

export type { Position } from '../../shared/protocol/positions.js';

/**
 * The controller's own clock for sensors: a monotonic reading (ms) and one-shot timers. Monotonic, since a
 * change may be seen before the wall clock is trusted and its time is derived later (docs/design.md section
 * 12.5). Injected, so that tests move it by hand.
 */
export interface SensorClock {
  /** Milliseconds on a clock that never jumps (performance.now() by default). */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realSensorClock: SensorClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Called once per settled change; `settledAt` is when it took that position, on the SensorClock. */
export type PositionListener = (position: Position, settledAt: number) => void;

/**
 * A gate position sensor of one object (docs/design.md section 12.5).
 *
 * Promises every sensor keeps:
 * - `start()` reads the position the gate is in, so that `current()` answers from then on; it rejects only for
 *   a configuration that can never work (no such GPIO chip or line).
 * - A change is reported to every listener once, after it settled: a contact bouncing within the debounce
 *   time is no change. `current()` already answers the new position when the listeners are called.
 * - `stop()` releases the input; no change is reported after it, and it never rejects.
 *
 * test/device/sensor-contract.ts holds these promises as one suite, run against every sensor.
 */
export interface PositionSensor {
  /** The object whose gate it watches. */
  readonly object: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The settled position; null before `start()` and after `stop()`. */
  current(): Position | null;
  /** Adds a listener; returns the function that removes it. */
  onChange(listener: PositionListener): () => void;
}

/** The listeners of one sensor, each called once per change. */
export class PositionListeners {
  readonly #listeners = new Set<PositionListener>();

  add(listener: PositionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  tell(position: Position, settledAt: number): void {
    for (const listener of [...this.#listeners]) listener(position, settledAt);
  }
}
