import type { Position } from '../../shared/protocol/positions.js';
import type { SimulatedSensorConfig } from '../config.js';
import {
  type PositionListener,
  PositionListeners,
  type PositionSensor,
  realSensorClock,
  type SensorClock,
} from './position-sensor.js';

/** What a simulated sensor follows: the simulated driver's outputs (device/drivers/simulated.ts). */
export interface PulseSource {
  watch(listener: (objectId: string, active: boolean) => void): () => void;
}

/**
 * Where a simulated gate's position outlives the controller, as a real gate's does: a gate left open is still
 * open after a restart. Without one, a simulated gate starts closed.
 */
export interface GateMemory {
  read(object: string): Position | null;
  write(object: string, position: Position): void;
}

export interface SimulatedSensorOptions {
  object: string;
  config: SimulatedSensorConfig;
  pulses: PulseSource;
  clock?: SensorClock;
  memory?: GateMemory;
}

/**
 * A gate without hardware (docs/design.md section 12.5), closed at first start, moved by its object's simulated
 * pulses: `open_after_ms` after a pulse starts it is seen open; in `auto-close` mode it closes again
 * `close_after_ms` later (a pulse while it is open starts that wait again, as a gate's auto-close timer does),
 * in `toggle` mode the next pulse closes it, again after `open_after_ms`. A pulse while it moves is ignored.
 * Stuck, it never moves: the cloud then sees "relay fired, gate did not move".
 */
export class SimulatedSensor implements PositionSensor {
  readonly object: string;
  readonly #options: SimulatedSensorOptions;
  readonly #clock: SensorClock;
  readonly #listeners = new PositionListeners();
  #position: Position | null = null;
  #stuck: boolean;
  /** The timer of a movement under way (travel, or the auto-close wait). */
  #moving: unknown = null;
  #travelling = false;
  #unwatch: (() => void) | null = null;

  constructor(options: SimulatedSensorOptions) {
    this.object = options.object;
    this.#options = options;
    this.#clock = options.clock ?? realSensorClock;
    this.#stuck = options.config.stuck;
  }

  async start(): Promise<void> {
    this.#position = this.#options.memory?.read(this.object) ?? 'closed';
    // An auto-closing gate found open closes after its wait, as it would have had the controller kept running.
    if (this.#position === 'open' && this.#options.config.mode === 'auto-close' && !this.#stuck) {
      this.#closeLater();
    }
    this.#unwatch = this.#options.pulses.watch((objectId, active) => {
      if (objectId === this.object && active) this.#pulse();
    });
  }

  async stop(): Promise<void> {
    this.#unwatch?.();
    this.#unwatch = null;
    this.#cancel();
    this.#position = null;
  }

  current(): Position | null {
    return this.#position;
  }

  onChange(listener: PositionListener): () => void {
    return this.#listeners.add(listener);
  }

  /** Makes the gate stick (it stops where it is and ignores pulses) or move again, for tests and the demo. */
  setStuck(stuck: boolean): void {
    this.#stuck = stuck;
    if (stuck) this.#cancel();
  }

  get stuck(): boolean {
    return this.#stuck;
  }

  #pulse(): void {
    if (this.#stuck || this.#position === null || this.#travelling) return;
    const { mode, open_after_ms } = this.#options.config;
    if (this.#position === 'open' && mode === 'auto-close') {
      this.#closeLater();
      return;
    }
    const target: Position = this.#position === 'open' ? 'closed' : 'open';
    this.#cancel();
    this.#travelling = true;
    this.#moving = this.#clock.setTimeout(() => {
      this.#travelling = false;
      this.#moving = null;
      this.#settle(target);
      if (target === 'open' && mode === 'auto-close') this.#closeLater();
    }, open_after_ms);
  }

  #closeLater(): void {
    this.#cancel();
    this.#moving = this.#clock.setTimeout(() => {
      this.#moving = null;
      this.#settle('closed');
    }, this.#options.config.close_after_ms);
  }

  #settle(position: Position): void {
    if (this.#position === null || this.#position === position) return;
    this.#position = position;
    this.#options.memory?.write(this.object, position);
    this.#listeners.tell(position, this.#clock.now());
  }

  #cancel(): void {
    if (this.#moving !== null) this.#clock.clearTimeout(this.#moving);
    this.#moving = null;
    this.#travelling = false;
  }
}
