import { existsSync } from 'node:fs';
import type { Position } from '../../shared/protocol/positions.js';
import type { GpioSensorConfig } from '../config.js';
import { DEFAULT_SYSFS_ROOT, NoGpioChipError, sysfsNumber } from '../drivers/gpio-sysfs.js';
import { loadOnoff } from '../drivers/relay-gpio.js';
import {
  type PositionListener,
  PositionListeners,
  type PositionSensor,
  realSensorClock,
  type SensorClock,
} from './position-sensor.js';

/** The part of onoff's `Gpio` an input uses; tests pass a fake class with the same shape. */
export interface InputGpioLike {
  readSync(): 0 | 1;
  watch(callback: (error: Error | null | undefined, value: 0 | 1) => void): void;
  unwatchAll(): void;
  unexport(): void;
}

export type InputGpioConstructor = new (
  gpio: number,
  direction: 'in',
  edge: 'both',
  options?: { activeLow?: boolean },
) => InputGpioLike;

export interface GpioSensorOptions {
  object: string;
  config: GpioSensorConfig;
  /** The sysfs GPIO folder used to map line numbers; injectable for tests. */
  sysfsRoot?: string;
  /** The Gpio class; by default onoff's, loaded only when the sensor starts. */
  Gpio?: InputGpioConstructor;
  clock?: SensorClock;
  log?: (line: string) => void;
}

/**
 * A reed switch or limit switch on a GPIO input, watched through sysfs edge interrupts (onoff, edge `both`).
 * Levels are read raw and turned into a position from `active_low` and `closed_when`. The debounce is ours, not
 * onoff's: an edge starts a wait of `debounce_ms`, every further edge starts it again, and only when it runs
 * out is the level read and, if it differs from the last settled one, reported, dated at the last edge (when
 * the gate got there). A contact that bounces and comes back within the wait reports nothing.
 */
export class GpioSensor implements PositionSensor {
  readonly object: string;
  readonly #options: GpioSensorOptions;
  readonly #clock: SensorClock;
  readonly #listeners = new PositionListeners();
  #gpio: InputGpioLike | null = null;
  #position: Position | null = null;
  #wait: unknown = null;
  #lastEdge = 0;

  constructor(options: GpioSensorOptions) {
    this.object = options.object;
    this.#options = options;
    this.#clock = options.clock ?? realSensorClock;
  }

  async start(): Promise<void> {
    const root = this.#options.sysfsRoot ?? DEFAULT_SYSFS_ROOT;
    const Gpio = this.#options.Gpio ?? (await loadOnoff(root));
    if (!existsSync(root)) throw new NoGpioChipError(root);
    const { gpio: number, chip } = await sysfsNumber(this.#options.config, root);
    let gpio: InputGpioLike;
    try {
      gpio = new Gpio(number, 'in', 'both', { activeLow: false });
    } catch (error) {
      throw new Error(
        `cannot open GPIO ${number} for the sensor of ${this.object}: ${(error as Error).message}` +
          ' (is the user in the gpio group?)',
      );
    }
    this.#gpio = gpio;
    this.#position = this.#read(gpio);
    gpio.watch((error) => {
      if (error) this.#options.log?.(`sensor ${this.object}: ${error.message}`);
      else this.#edge(gpio);
    });
    const where = chip
      ? `${chip.name} line ${this.#options.config.line}`
      : `line ${this.#options.config.line}`;
    this.#options.log?.(`sensor ${this.object}: ${where} is sysfs GPIO ${number}, gate ${this.#position}`);
  }

  async stop(): Promise<void> {
    const gpio = this.#gpio;
    this.#gpio = null;
    this.#position = null;
    if (this.#wait !== null) this.#clock.clearTimeout(this.#wait);
    this.#wait = null;
    if (!gpio) return;
    try {
      gpio.unwatchAll();
      gpio.unexport();
    } catch {
      // An input left exported does no harm; the next start exports it again.
    }
  }

  current(): Position | null {
    return this.#position;
  }

  onChange(listener: PositionListener): () => void {
    return this.#listeners.add(listener);
  }

  #edge(gpio: InputGpioLike): void {
    if (gpio !== this.#gpio) return;
    this.#lastEdge = this.#clock.now();
    if (this.#wait !== null) this.#clock.clearTimeout(this.#wait);
    this.#wait = null;
    const debounce = this.#options.config.debounce_ms;
    if (debounce === 0) {
      this.#settle(gpio);
      return;
    }
    this.#wait = this.#clock.setTimeout(() => {
      this.#wait = null;
      this.#settle(gpio);
    }, debounce);
  }

  #settle(gpio: InputGpioLike): void {
    if (gpio !== this.#gpio) return;
    let position: Position;
    try {
      position = this.#read(gpio);
    } catch (error) {
      this.#options.log?.(`sensor ${this.object}: cannot read: ${(error as Error).message}`);
      return;
    }
    if (position === this.#position) return;
    this.#position = position;
    this.#listeners.tell(position, this.#lastEdge);
  }

  #read(gpio: InputGpioLike): Position {
    const { active_low, closed_when } = this.#options.config;
    const active = (gpio.readSync() === 1) !== active_low;
    return active === (closed_when === 'active') ? 'closed' : 'open';
  }
}
