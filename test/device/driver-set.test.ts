import { describe, expect, it } from 'vitest';
import type { ObjectConfig } from '../../device/config.js';
import type { Driver } from '../../device/drivers/driver.js';
import { DriverSet } from '../../device/drivers/driver-set.js';
import { StartFailed, StopFailed } from '../../shared/lifecycle/lifecycle.js';

/**
 * The drivers of a controller start in order and stop in reverse (shared/lifecycle/lifecycle.ts): a driver that
 * cannot start is named and the ones already started release their outputs; a driver that breaks its promise
 * never to reject on stop does not keep the others from stopping.
 */
function recorded(
  log: string[],
  kind: ObjectConfig['kind'],
  fails: { start?: boolean; stop?: boolean } = {},
): Driver {
  return {
    kind,
    faultReason: 'relay_fault',
    async start() {
      if (fails.start) throw new Error(`${kind} hardware missing`);
      log.push(`start ${kind}`);
    },
    async open() {
      return { outcome: 'opened' };
    },
    async stop() {
      if (fails.stop) throw new Error(`${kind} stuck`);
      log.push(`stop ${kind}`);
    },
  };
}

const objects: ObjectConfig[] = [
  {
    id: 'gate',
    label: 'Gate',
    kind: 'relay',
    line: 17,
    chip: 'auto',
    sysfs_base: 'auto',
    active_low: true,
    pulse_ms: 0,
  },
  { id: 'demo', label: 'Demo', kind: 'simulated', pulse_ms: 0 },
];

describe('DriverSet', () => {
  it('names the driver that cannot start and stops the ones already started', async () => {
    const log: string[] = [];
    const drivers = new DriverSet(
      { objects, modem: undefined },
      { drivers: { relay: recorded(log, 'relay'), simulated: recorded(log, 'simulated', { start: true }) } },
    );
    const failure = (await drivers.start().catch((error: unknown) => error)) as StartFailed;
    expect(failure).toBeInstanceOf(StartFailed);
    expect(failure.message).toBe('simulated driver failed to start: simulated hardware missing');
    expect(log).toEqual(['start relay', 'stop relay']);
  });

  it('stops every driver when one fails to stop, and reports it', async () => {
    const log: string[] = [];
    const drivers = new DriverSet(
      { objects, modem: undefined },
      { drivers: { relay: recorded(log, 'relay'), simulated: recorded(log, 'simulated', { stop: true }) } },
    );
    await drivers.start();
    await expect(drivers.stop()).rejects.toBeInstanceOf(StopFailed);
    expect(log).toEqual(['start relay', 'start simulated', 'stop relay']);
  });
});
