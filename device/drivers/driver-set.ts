import { Lifecycle } from '../../shared/lifecycle/lifecycle.js';
import type {
  DeviceConfig,
  GsmObjectConfig,
  ObjectConfig,
  PhoneObjectConfig,
  RelayObjectConfig,
  SimulatedObjectConfig,
} from '../config.js';
import type { Driver } from './driver.js';
import { ModemGsmDriver } from './modem-gsm.js';
import { PhoneCallDriver } from './phone-call.js';
import { type GpioConstructor, RelayGpioDriver } from './relay-gpio.js';
import { SimulatedDriver } from './simulated.js';

/** Replacements for the hardware, for tests and the demo. */
export interface DriverOverrides {
  /** Used instead of the driver that the config names, per kind. */
  drivers?: Partial<Record<ObjectConfig['kind'], Driver>>;
  Gpio?: GpioConstructor;
  sysfsRoot?: string;
  /** The environment whose PATH finds Termux:API's commands (phone objects); the process's own by default. */
  env?: Readonly<Record<string, string | undefined>>;
  log?: (line: string) => void;
}

/**
 * The drivers the config needs, one per kind of object in use, with the object-to-driver lookup.
 * Starting starts every driver; stopping stops them all even when one fails, so every output ends safe
 * (shared/lifecycle/lifecycle.ts: a driver that fails to start is named, the ones started before are stopped).
 */
export class DriverSet {
  readonly drivers: readonly Driver[];
  readonly #byKind: Map<ObjectConfig['kind'], Driver>;
  readonly #lifecycle: Lifecycle;

  constructor(config: Pick<DeviceConfig, 'objects' | 'modem'>, overrides: DriverOverrides = {}) {
    const of = <K extends ObjectConfig['kind']>(kind: K) =>
      config.objects.filter((object): object is Extract<ObjectConfig, { kind: K }> => object.kind === kind);
    const byKind = new Map<ObjectConfig['kind'], Driver>();
    const relays: readonly RelayObjectConfig[] = of('relay');
    const gsm: readonly GsmObjectConfig[] = of('gsm');
    const phones: readonly PhoneObjectConfig[] = of('phone');
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
    if (phones.length > 0) {
      byKind.set(
        'phone',
        overrides.drivers?.phone ?? new PhoneCallDriver({ objects: phones, env: overrides.env, log }),
      );
    }
    if (simulated.length > 0) {
      byKind.set('simulated', overrides.drivers?.simulated ?? new SimulatedDriver({ objects: simulated }));
    }
    this.#byKind = byKind;
    this.drivers = [...byKind.values()];
    this.#lifecycle = new Lifecycle(
      [...byKind].map(([kind, driver]) => ({
        name: `${kind} driver`,
        start: () => driver.start(),
        stop: () => driver.stop(),
      })),
    );
  }

  driverFor(object: ObjectConfig): Driver {
    const driver = this.#byKind.get(object.kind);
    if (!driver) throw new Error(`no driver for ${object.kind}`);
    return driver;
  }

  start(): Promise<void> {
    return this.#lifecycle.start();
  }

  /** Stops every driver started; a driver breaking its promise never to reject is reported, after the others. */
  stop(): Promise<void> {
    return this.#lifecycle.stop();
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
