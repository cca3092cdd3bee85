import type {
  DeviceConfig,
  GsmObjectConfig,
  ObjectConfig,
  RelayObjectConfig,
  SimulatedObjectConfig,
} from '../config.js';
import type { Driver } from './driver.js';
import { ModemGsmDriver } from './modem-gsm.js';
import { type GpioConstructor, RelayGpioDriver } from './relay-gpio.js';
import { SimulatedDriver } from './simulated.js';

/** Replacements for the hardware, for tests and the demo. */
export interface DriverOverrides {
  /** Used instead of the driver that the config names, per kind. */
  drivers?: Partial<Record<ObjectConfig['kind'], Driver>>;
  Gpio?: GpioConstructor;
  sysfsRoot?: string;
  log?: (line: string) => void;
}

/**
 * The drivers the config needs, one per kind of object in use, with the object-to-driver lookup.
 * Starting starts every driver; stopping stops them all even when one fails, so every output ends safe.
 */
export class DriverSet {
  readonly drivers: readonly Driver[];
  readonly #byKind: Map<ObjectConfig['kind'], Driver>;
  #started: Driver[] = [];

  constructor(config: Pick<DeviceConfig, 'objects' | 'modem'>, overrides: DriverOverrides = {}) {
    const of = <K extends ObjectConfig['kind']>(kind: K) =>
      config.objects.filter((object): object is Extract<ObjectConfig, { kind: K }> => object.kind === kind);
    const byKind = new Map<ObjectConfig['kind'], Driver>();
    const relays: readonly RelayObjectConfig[] = of('relay');
    const gsm: readonly GsmObjectConfig[] = of('gsm');
    const simulated: readonly SimulatedObjectConfig[] = of('simulated');
    const log = overrides.log;
    if (relays.length > 0) {
      byKind.set(
        'relay',
        overrides.drivers?.relay ??
          new RelayGpioDriver({ objects: relays, Gpio: overrides.Gpio, sysfsRoot: overrides.sysfsRoot, log }),
      );
    }
    if (gsm.length > 0) {
      if (!config.modem) throw new Error('gsm objects need a modem section in the config');
      byKind.set(
        'gsm',
        overrides.drivers?.gsm ?? new ModemGsmDriver({ modem: config.modem, objects: gsm, log }),
      );
    }
    if (simulated.length > 0) {
      byKind.set('simulated', overrides.drivers?.simulated ?? new SimulatedDriver({ objects: simulated }));
    }
    this.#byKind = byKind;
    this.drivers = [...byKind.values()];
  }

  driverFor(object: ObjectConfig): Driver {
    const driver = this.#byKind.get(object.kind);
    if (!driver) throw new Error(`no driver for ${object.kind}`);
    return driver;
  }

  async start(): Promise<void> {
    for (const driver of this.drivers) {
      try {
        await driver.start();
      } catch (error) {
        await this.stop();
        throw error;
      }
      this.#started.push(driver);
    }
  }

  async stop(): Promise<void> {
    const started = this.#started.reverse();
    this.#started = [];
    for (const driver of started) {
      try {
        await driver.stop();
      } catch {
        // stop() promises not to reject; keep stopping the others if one breaks that promise.
      }
    }
  }

  /** The first signal quality a driver reports (there is at most one modem). */
  signalQuality(): number | null {
    for (const driver of this.drivers) {
      const value = driver.signalQuality?.();
      if (value !== undefined && value !== null) return value;
    }
    return null;
  }
}
