import type { Clock } from '../../cloud/foundation/clock.js';

/** A clock that moves only when told, for expiry and lifetimes. */
export class FakeClock implements Clock {
  #ms: number;

  constructor(start: Date | number = Date.now()) {
    this.#ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  advance(ms: number): void {
    this.#ms += ms;
  }

  set(date: Date): void {
    this.#ms = date.getTime();
  }
}
