import { loadConfig } from '../config.js';
import { openSafely } from '../drivers/driver.js';
import { type DriverOverrides, DriverSet } from '../drivers/driver-set.js';
import { readStatus } from '../runtime/status.js';
import {
  type Position,
  type PositionSensor,
  realSensorClock,
  type SensorClock,
} from '../sensors/position-sensor.js';
import { type SensorOverrides, SensorSet } from '../sensors/sensor-set.js';
import { cliError } from './cli-error.js';
import { daemonAlive } from './daemon-running.js';

export interface TestOptions {
  configPath: string;
  /** Only this object; all of them when absent. */
  objectId?: string;
  overrides?: DriverOverrides & SensorOverrides;
  /** How long a gate with a sensor has to be seen moving after its pulse (ms; default MOVE_WAIT_MS). */
  moveWaitMs?: number;
  print?: (line: string) => void;
}

/** As long as the cloud gives a gate, by default, before it marks an opening "gate did not move". */
export const MOVE_WAIT_MS = 30_000;

/**
 * `gatelink-device test`: opens each object once, locally, without the cloud, and says what happened. An object
 * with a position sensor has its gate read before the pulse, and is watched after it until the gate is seen
 * moving (or `moveWaitMs` passes: a wiring to check). It refuses while the daemon runs, since both would drive
 * the same relays, modem and inputs. Exit code 1 when any opening failed or any gate was not seen moving.
 */
export async function testCommand(options: TestOptions): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const config = loadConfig(options.configPath);
  if (daemonAlive(await readStatus(config.state_dir).catch(() => null))) {
    throw cliError('daemon_running');
  }
  const objects = options.objectId ? config.objects.filter((o) => o.id === options.objectId) : config.objects;
  if (objects.length === 0) {
    throw cliError('unknown_object', {
      object: options.objectId ?? '',
      file: config.config_file,
      objects: config.objects.map((o) => o.id),
    });
  }
  const drivers = new DriverSet(config, { log: print, ...options.overrides });
  const sensors = new SensorSet(config, drivers.drivers, { log: print, ...options.overrides });
  const clock = options.overrides?.sensorClock ?? realSensorClock;
  const moveWaitMs = options.moveWaitMs ?? MOVE_WAIT_MS;
  let failures = 0;
  try {
    await drivers.start();
    await sensors.start();
    for (const object of objects) {
      const sensor = sensors.sensorOf(object.id);
      if (sensor) print(`${object.id} (${object.label}): gate ${sensor.current() ?? 'not read'}`);
      const moving = sensor ? nextChange(sensor, clock, moveWaitMs) : null;
      const started = Date.now();
      const result = await openSafely(drivers.driverFor(object), object);
      const took = `${Date.now() - started} ms`;
      if (result.outcome === 'opened') print(`${object.id} (${object.label}): opened, ${took}`);
      else {
        failures++;
        print(
          `${object.id} (${object.label}): FAILED ${result.reason}${result.detail ? ` (${result.detail})` : ''}, ${took}`,
        );
      }
      if (!moving) continue;
      if (result.outcome !== 'opened') {
        moving.cancel();
        continue;
      }
      const moved = await moving.seen;
      if (moved)
        print(`${object.id} (${object.label}): gate seen ${moved.position} after ${seconds(moved.afterMs)}`);
      else {
        failures++;
        print(
          `${object.id} (${object.label}): FAILED gate not seen moving within ${seconds(moveWaitMs)}: check the sensor's wiring and its config (hardware/README.md, "Wiring a gate position sensor")`,
        );
      }
    }
  } finally {
    await sensors.stop();
    await drivers.stop();
  }
  print(failures === 0 ? 'All objects opened.' : `${failures} of ${objects.length} object(s) failed.`);
  return failures === 0 ? 0 : 1;
}

/** The sensor's next change within `waitMs` (null when none came), and how long after the watch began. */
function nextChange(sensor: PositionSensor, clock: SensorClock, waitMs: number) {
  const since = clock.now();
  let cancel = () => {};
  const seen = new Promise<{ position: Position; afterMs: number } | null>((resolve) => {
    // A timer of its own, not the sensor clock's: those do not keep the process alive, and the command must
    // stay up until the gate moves or the wait ends.
    const timer = setTimeout(() => finish(null), waitMs);
    const unsubscribe = sensor.onChange((position, settledAt) =>
      finish({ position, afterMs: Math.max(0, settledAt - since) }),
    );
    function finish(change: { position: Position; afterMs: number } | null) {
      clearTimeout(timer);
      unsubscribe();
      resolve(change);
    }
    cancel = () => finish(null);
  });
  return { seen, cancel: () => cancel() };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
