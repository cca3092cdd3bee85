import { loadConfig } from '../config.js';
import { openSafely } from '../drivers/driver.js';
import { type DriverOverrides, DriverSet } from '../drivers/driver-set.js';
import { readStatus } from '../runtime/status.js';
import { cliError } from './cli-error.js';
import { daemonAlive } from './daemon-running.js';

export interface TestOptions {
  configPath: string;
  /** Only this object; all of them when absent. */
  objectId?: string;
  overrides?: DriverOverrides;
  print?: (line: string) => void;
}

/**
 * `gatelink-device test`: opens each object once, locally, without the cloud, and says what happened. It refuses
 * while the daemon runs, since both would drive the same relays and modem. Exit code 1 when any opening failed.
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
  let failures = 0;
  try {
    await drivers.start();
    for (const object of objects) {
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
    }
  } finally {
    await drivers.stop();
  }
  print(failures === 0 ? 'All objects opened.' : `${failures} of ${objects.length} object(s) failed.`);
  return failures === 0 ? 0 : 1;
}
