import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lifecycle } from '../../shared/lifecycle/lifecycle.js';
import { POSITIONS, type Position } from '../../shared/protocol/positions.js';
import type { DeviceConfig } from '../config.js';
import type { Driver } from '../drivers/driver.js';
import { writeFileAtomic } from '../files.js';
import { GpioSensor, type InputGpioConstructor } from './gpio-sensor.js';
import type { PositionSensor, SensorClock } from './position-sensor.js';
import { type GateMemory, type PulseSource, SimulatedSensor } from './simulated-sensor.js';

/** Replacements for the sensors' hardware and clock, for tests and the demo. */
export interface SensorOverrides {
  InputGpio?: InputGpioConstructor;
  sysfsRoot?: string;
  sensorClock?: SensorClock;
  log?: (line: string) => void;
}

/**
 * The position sensors the config names, one per object that has one (docs/design.md section 12.5). Starting
 * starts every sensor (shared/lifecycle/lifecycle.ts: one that fails is named, those started before are
 * stopped); stopping stops them all even when one fails. Simulated sensors follow the simulated driver's
 * pulses and remember their gates in the state folder.
 */
export class SensorSet {
  readonly sensors: readonly PositionSensor[];
  readonly #lifecycle: Lifecycle;

  constructor(
    config: Pick<DeviceConfig, 'objects' | 'state_dir'>,
    drivers: readonly Driver[],
    overrides: SensorOverrides = {},
  ) {
    const clock = overrides.sensorClock;
    const sensors: PositionSensor[] = [];
    let memory: RememberedGates | undefined;
    for (const object of config.objects) {
      const sensor = object.sensor;
      if (!sensor) continue;
      if (sensor.type === 'gpio') {
        sensors.push(
          new GpioSensor({
            object: object.id,
            config: sensor,
            Gpio: overrides.InputGpio,
            sysfsRoot: overrides.sysfsRoot,
            clock,
            log: overrides.log,
          }),
        );
      } else {
        memory ??= gateMemory(join(config.state_dir, SIMULATED_GATES));
        const pulses = drivers.find((driver) => driver.kind === 'simulated');
        if (!pulses || !isPulseSource(pulses))
          throw new Error('a simulated sensor needs the simulated driver');
        sensors.push(new SimulatedSensor({ object: object.id, config: sensor, pulses, clock, memory }));
      }
    }
    this.sensors = sensors;
    const kept = memory;
    this.#lifecycle = new Lifecycle([
      // First, so stopped last: the sensors' last changes are written before the controller stops.
      ...(kept ? [{ name: 'simulated gates', start: async () => {}, stop: () => kept.settled() }] : []),
      ...sensors.map((sensor) => ({
        name: `sensor of ${sensor.object}`,
        start: () => sensor.start(),
        stop: () => sensor.stop(),
      })),
    ]);
  }

  sensorOf(object: string): PositionSensor | undefined {
    return this.sensors.find((sensor) => sensor.object === object);
  }

  start(): Promise<void> {
    return this.#lifecycle.start();
  }

  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }
}

function isPulseSource(driver: Driver): driver is Driver & PulseSource {
  return typeof (driver as Partial<PulseSource>).watch === 'function';
}

/** The state folder's file of simulated gates' positions. */
export const SIMULATED_GATES = 'simulated-gates.json';

interface RememberedGates extends GateMemory {
  /** Resolves once the latest change is on disk. */
  settled(): Promise<void>;
}

/**
 * How often at most the simulated gates' file is rewritten. It is for restarts only: a controller that stops
 * writes it out first, and one that crashes forgets at most this much of its simulation.
 */
const GATE_MEMORY_WRITE_MS = 1000;

/**
 * The simulated gates' positions in one small file, read once and rewritten in the background, at most once a
 * GATE_MEMORY_WRITE_MS with the latest positions, so that a burst of changes costs one write, and the
 * controller's event loop never waits on the disk for a simulation.
 */
function gateMemory(file: string): RememberedGates {
  let gates: Record<string, Position> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();
  const load = (): Record<string, Position> => {
    if (gates) return gates;
    gates = {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      for (const [object, position] of Object.entries(parsed as object)) {
        if ((POSITIONS as readonly unknown[]).includes(position)) gates[object] = position as Position;
      }
    } catch {
      // None yet, or unreadable: every simulated gate starts closed.
    }
    return gates;
  };
  const writeOut = () => {
    timer = null;
    const text = `${JSON.stringify(gates)}\n`;
    writing = writing
      .then(() => writeFileAtomic(file, text))
      .catch(() => {
        // A simulation that forgets its gate after a restart starts closed; nothing else depends on it.
      });
  };
  return {
    read: (object) => load()[object] ?? null,
    write: (object, position) => {
      gates = { ...load(), [object]: position };
      timer ??= setTimeout(writeOut, GATE_MEMORY_WRITE_MS);
      timer.unref?.();
    },
    settled: async () => {
      if (timer) {
        clearTimeout(timer);
        writeOut();
      }
      await writing;
    },
  };
}
