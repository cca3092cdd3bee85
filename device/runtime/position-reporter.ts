import { randomUUID } from 'node:crypto';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Position, type PositionReport, signPositionReport } from '../../shared/protocol/positions.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import type { PositionSensor } from '../sensors/position-sensor.js';

/** What the reporter needs of the clock monitor (./clock.ts). */
export interface TrustedClock {
  readonly trustedSince: number | null;
  whenTrusted(listener: () => void): () => void;
}

/** One sensor's position as the status file shows it; `since` is null until the clock is trusted. */
export interface SensorPosition {
  object: string;
  position: Position;
  since: number | null;
}

export interface PositionReporterOptions {
  deviceId: string;
  deviceKey: SigningKey;
  sensors: readonly PositionSensor[];
  outbox: { put(report: PositionReport, options: { lazy: boolean }): Promise<void> };
  clock: TrustedClock;
  /** The wall clock (Unix ms). */
  now: () => number;
  /** The sensors' monotonic clock (SensorClock.now), on which they date their changes. */
  monotonic: () => number;
  /** Resolves once no opening of the object is in progress and its acknowledgement is in the outbox. */
  idle?: (object: string) => Promise<void>;
  newId?: () => string;
  onPositions?: (positions: readonly SensorPosition[]) => void;
  log?: (line: string) => void;
}

interface Seen {
  position: Position;
  /** When it took this position, on the monotonic clock. */
  seenAt: number;
  /** The same on the trusted wall clock, once the clock is trusted. */
  changedAt: number | null;
}

/** Changes kept while the clock is not trusted; beyond it, the oldest are dropped (the newest tell the story). */
const MAX_HELD = 256;

/**
 * Turns the sensors' changes into signed position reports in the outbox (docs/design.md section 12.5): one
 * report per settled change, and on every (re)connect one of each sensor's current position, with the same
 * `changed_at` and a new `id` and `at`. `changed_at` is on the trusted clock: a change seen before the clock
 * is trusted is held, and reported once it is, its time derived from the monotonic clock (how long ago it was
 * seen). A change report waits until the opening of its object in progress, if any, has its acknowledgement
 * in the outbox, so the cloud always has the opening before the gate it moved.
 */
export class PositionReporter {
  readonly #options: PositionReporterOptions;
  readonly #seen = new Map<string, Seen>();
  /** Changes seen before the clock was trusted, in order. */
  #held: { object: string; seen: Seen }[] = [];
  /** A connect happened before the clock was trusted: report the current positions once it is. */
  #connectHeld = false;
  #running = false;
  #unsubscribe: (() => void)[] = [];
  /** Puts into the outbox one at a time, in the order the reports were made. */
  #chain: Promise<void> = Promise.resolve();

  constructor(options: PositionReporterOptions) {
    this.#options = options;
  }

  get positions(): SensorPosition[] {
    return [...this.#seen].map(([object, seen]) => ({
      object,
      position: seen.position,
      since: seen.changedAt,
    }));
  }

  /** Takes each started sensor's first reading (dated now) and listens for changes. */
  async start(): Promise<void> {
    const o = this.#options;
    this.#running = true;
    for (const sensor of o.sensors) {
      const position = sensor.current();
      if (position !== null)
        this.#seen.set(sensor.object, { position, seenAt: o.monotonic(), changedAt: null });
      this.#unsubscribe.push(
        sensor.onChange((next, settledAt) => this.#change(sensor.object, next, settledAt)),
      );
    }
    this.#unsubscribe.push(o.clock.whenTrusted(() => this.#trusted()));
    this.#told();
  }

  /** Stops listening and waits for the reports already on their way into the outbox. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#unsubscribe = [];
    await this.#chain;
  }

  /** Reports every sensor's current position; called on each (re)connect. */
  reportCurrent(): void {
    if (!this.#running) return;
    if (this.#options.clock.trustedSince === null) {
      this.#connectHeld = true;
      return;
    }
    for (const [object, seen] of this.#seen) this.#report(object, seen, false);
  }

  #change(object: string, position: Position, settledAt: number): void {
    if (!this.#running) return;
    const seen: Seen = { position, seenAt: settledAt, changedAt: null };
    this.#seen.set(object, seen);
    if (this.#options.clock.trustedSince === null) {
      this.#held.push({ object, seen });
      if (this.#held.length > MAX_HELD) this.#held.shift();
    } else {
      this.#report(object, seen, true);
    }
    this.#told();
  }

  #trusted(): void {
    if (!this.#running) return;
    for (const seen of this.#seen.values()) this.#date(seen);
    const held = this.#held;
    this.#held = [];
    for (const { object, seen } of held) this.#report(object, seen, true);
    if (this.#connectHeld) {
      this.#connectHeld = false;
      this.reportCurrent();
    }
    this.#told();
  }

  /** Dates a position on the trusted clock: now, less how long ago the monotonic clock saw it. */
  #date(seen: Seen): number {
    const o = this.#options;
    seen.changedAt ??= Math.max(0, Math.round(o.now() - (o.monotonic() - seen.seenAt)));
    return seen.changedAt;
  }

  #report(object: string, seen: Seen, afterOpening: boolean): void {
    const o = this.#options;
    const changedAt = this.#date(seen);
    this.#chain = this.#chain
      .then(async () => {
        if (afterOpening) await o.idle?.(object);
        const report = signPositionReport(o.deviceKey, {
          v: PROTOCOL_VERSION,
          type: 'position',
          id: (o.newId ?? randomUUID)(),
          device_id: o.deviceId,
          object,
          position: seen.position,
          changed_at: changedAt,
          at: Math.max(changedAt, Math.round(o.now())),
        });
        // Lazy: a report never makes an opening wait for a disk write of its own (./outbox.ts).
        await o.outbox.put(report, { lazy: true });
      })
      .catch((error: Error) => o.log?.(`sensor ${object}: report not kept: ${error.message}`));
  }

  #told(): void {
    this.#options.onPositions?.(this.positions);
  }
}
