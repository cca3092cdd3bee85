import { existsSync } from 'node:fs';
import type { Gpio as OnoffGpio } from 'onoff';
import type { ObjectConfig, RelayObjectConfig } from '../config.js';
import { type Driver, DriverError, type OpenOutcome, realSleep, type Sleep } from './driver.js';
import { DEFAULT_SYSFS_ROOT, NoGpioChipError, sysfsNumber } from './gpio-sysfs.js';

/** The part of onoff's `Gpio` this driver uses; tests pass a fake class with the same shape. */
export interface GpioLike {
  readSync(): 0 | 1;
  writeSync(value: 0 | 1): void;
  unexport(): void;
}

export type GpioConstructor = new (
  gpio: number,
  direction: 'high' | 'low',
  edge?: 'none',
  options?: { activeLow?: boolean },
) => GpioLike;

export interface RelayGpioDriverOptions {
  objects: readonly RelayObjectConfig[];
  /** The sysfs GPIO folder used to map line numbers; injectable for tests. */
  sysfsRoot?: string;
  /** The Gpio class; by default onoff's, loaded only when this driver starts. */
  Gpio?: GpioConstructor;
  sleep?: Sleep;
  log?: (line: string) => void;
}

interface Line {
  config: RelayObjectConfig;
  gpio: GpioLike;
  /** Raw levels: what the pin carries when the relay is released and when it is energised. */
  released: 0 | 1;
  active: 0 | 1;
}

/**
 * Relay channels on GPIO lines, through the sysfs interface (onoff). Levels are written raw, computed from
 * `active_low`, and each line is exported with its released level as the initial output value, so that starting
 * the daemon never makes a relay click. The relay is released on start, on stop, after every pulse and on any
 * failure; a pin that does not read back what was written is reported as `relay_fault`.
 */
export class RelayGpioDriver implements Driver {
  readonly kind = 'relay';
  readonly faultReason = 'relay_fault';
  readonly #options: RelayGpioDriverOptions;
  readonly #sleep: Sleep;
  readonly #lines = new Map<string, Line>();
  /** Objects with a pulse in progress: a second one would be cut short by the first one's release. */
  readonly #pulsing = new Set<string>();

  constructor(options: RelayGpioDriverOptions) {
    this.#options = options;
    this.#sleep = options.sleep ?? realSleep;
  }

  async start(): Promise<void> {
    const root = this.#options.sysfsRoot ?? DEFAULT_SYSFS_ROOT;
    const Gpio = this.#options.Gpio ?? (await loadOnoff(root));
    // A machine without GPIO is told so by name (hardware/README.md, "Try it on a laptop").
    if (!existsSync(root)) throw new NoGpioChipError(root);
    try {
      for (const config of this.#options.objects) {
        const { gpio: number, chip } = await sysfsNumber(
          config,
          this.#options.sysfsRoot ?? DEFAULT_SYSFS_ROOT,
        );
        const released: 0 | 1 = config.active_low ? 1 : 0;
        const active: 0 | 1 = config.active_low ? 0 : 1;
        let gpio: GpioLike;
        try {
          gpio = new Gpio(number, released === 1 ? 'high' : 'low', 'none', { activeLow: false });
        } catch (error) {
          throw new DriverError(
            'relay_fault',
            `cannot open GPIO ${number} for ${config.id}: ${(error as Error).message}` +
              ' (is the user in the gpio group?)',
          );
        }
        this.#lines.set(config.id, { config, gpio, released, active });
        gpio.writeSync(released);
        const where = chip ? `${chip.name} line ${config.line}` : `line ${config.line}`;
        this.#options.log?.(`relay ${config.id}: ${where} is sysfs GPIO ${number}, released`);
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async open(object: ObjectConfig): Promise<OpenOutcome> {
    const line = this.#lines.get(object.id);
    if (!line) throw new DriverError('relay_fault', `relay ${object.id} is not started`);
    if (this.#pulsing.has(object.id)) {
      return { outcome: 'failed', reason: 'busy', detail: 'a pulse of this relay is in progress' };
    }
    this.#pulsing.add(object.id);
    try {
      return await this.#pulse(line);
    } finally {
      this.#pulsing.delete(object.id);
    }
  }

  async #pulse(line: Line): Promise<OpenOutcome> {
    try {
      line.gpio.writeSync(line.active);
      if (line.gpio.readSync() !== line.active) {
        return { outcome: 'failed', reason: 'relay_fault', detail: 'the pin did not take the active level' };
      }
      await this.#sleep(line.config.pulse_ms);
    } finally {
      this.#release(line);
    }
    if (line.gpio.readSync() !== line.released) {
      return {
        outcome: 'failed',
        reason: 'relay_fault',
        detail: 'the pin did not return to the released level',
      };
    }
    return { outcome: 'opened' };
  }

  async stop(): Promise<void> {
    for (const line of this.#lines.values()) {
      this.#release(line);
      try {
        line.gpio.unexport();
      } catch {
        // The relay is released; a line left exported does no harm.
      }
    }
    this.#lines.clear();
  }

  /** Writes the released level, retrying once; never throws, since it runs on every failure path. */
  #release(line: Line): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        line.gpio.writeSync(line.released);
        return;
      } catch (error) {
        this.#options.log?.(`relay ${line.config.id}: cannot release: ${(error as Error).message}`);
      }
    }
  }
}

/** onoff's Gpio class, loaded only when GPIO is used (so that a machine without it can run simulated objects). */
export async function loadOnoff(root: string): Promise<typeof OnoffGpio> {
  let Gpio: typeof OnoffGpio;
  try {
    ({ Gpio } = await import('onoff'));
  } catch (error) {
    throw new DriverError('relay_fault', `cannot use GPIO: ${(error as Error).message}`);
  }
  // onoff's own check: the sysfs GPIO interface is there and writable.
  if (!Gpio.accessible) {
    if (!existsSync(root)) throw new NoGpioChipError(root);
    throw new DriverError(
      'relay_fault',
      `cannot use GPIO: ${root} is not writable (is the user in the gpio group?)`,
    );
  }
  return Gpio;
}
