import { describe, expect, it } from 'vitest';
import type { GpioSensorConfig, SimulatedObjectConfig, SimulatedSensorConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { GpioSensor } from '../../device/sensors/gpio-sensor.js';
import type { Position } from '../../device/sensors/position-sensor.js';
import { SimulatedSensor } from '../../device/sensors/simulated-sensor.js';
import { fakeInputGpio, fakeSysfs, PI4_CHIPS } from './fake-gpio.js';
import { FakeSensorClock } from './fake-sensor-clock.js';
import { tempDir } from './fixtures.js';
import { type SensorHarness, sensorContract } from './sensor-contract.js';

/** A reed switch to ground on BCM 22 with the pull-up: low (active) while the gate is shut. */
const REED: GpioSensorConfig = {
  type: 'gpio',
  line: 22,
  chip: 'auto',
  sysfs_base: 'auto',
  active_low: true,
  closed_when: 'active',
  debounce_ms: 50,
};
/** BCM 22 on gpiochip512. */
const SYSFS = 534;

async function gpioSetUp(config: GpioSensorConfig = REED) {
  const temp = await tempDir();
  await fakeSysfs(temp.dir, PI4_CHIPS);
  const pins = fakeInputGpio();
  pins.levels.set(SYSFS, 0);
  const clock = new FakeSensorClock();
  const sensor = new GpioSensor({ object: 'gate', config, sysfsRoot: temp.dir, Gpio: pins.Gpio, clock });
  return { temp, pins, clock, sensor };
}

async function gpioHarness(): Promise<SensorHarness> {
  const { temp, pins, clock, sensor } = await gpioSetUp();
  return {
    sensor,
    clock,
    initial: 'closed',
    settleMs: REED.debounce_ms,
    // The contact opens with a bounce or two, as a reed switch does.
    move: async () => {
      const to: 0 | 1 = (pins.levels.get(SYSFS) ?? 0) === 0 ? 1 : 0;
      pins.set(SYSFS, to);
      clock.advance(2);
      pins.set(SYSFS, to === 1 ? 0 : 1);
      clock.advance(3);
      pins.set(SYSFS, to);
    },
    bounce: () => {
      const level = pins.levels.get(SYSFS) ?? 0;
      pins.set(SYSFS, level === 1 ? 0 : 1);
      clock.advance(REED.debounce_ms / 2);
      pins.set(SYSFS, level);
    },
    released: () => !pins.exported.has(SYSFS) && !pins.watchers.has(SYSFS),
    dispose: temp.cleanup,
  };
}

const TOGGLE: SimulatedSensorConfig = {
  type: 'simulated',
  open_after_ms: 1500,
  mode: 'toggle',
  close_after_ms: 20_000,
  stuck: false,
};

function simulatedSetUp(config: SimulatedSensorConfig = TOGGLE) {
  const object: SimulatedObjectConfig = { id: 'gate', label: 'Gate', kind: 'simulated', pulse_ms: 0 };
  const driver = new SimulatedDriver({ objects: [object] });
  const clock = new FakeSensorClock();
  const sensor = new SimulatedSensor({ object: 'gate', config, pulses: driver, clock });
  return { object, driver, clock, sensor };
}

async function simulatedHarness(): Promise<SensorHarness> {
  const { object, driver, clock, sensor } = simulatedSetUp();
  await driver.start();
  return {
    sensor,
    clock,
    initial: 'closed',
    settleMs: TOGGLE.open_after_ms,
    move: async () => {
      await driver.open(object);
    },
    released: () => driver.watchers === 0,
    dispose: () => driver.stop(),
  };
}

sensorContract('gpio', gpioHarness, { contacts: true });
sensorContract('simulated', simulatedHarness, { contacts: false });

describe('gpio sensor', () => {
  it('reads a switch that opens when the gate is shut with closed_when: inactive', async () => {
    const { temp, pins, sensor } = await gpioSetUp({ ...REED, closed_when: 'inactive', active_low: false });
    pins.levels.set(SYSFS, 0);
    await sensor.start();
    expect(sensor.current()).toBe('closed');
    await sensor.stop();
    pins.levels.set(SYSFS, 1);
    await sensor.start();
    expect(sensor.current()).toBe('open');
    await sensor.stop();
    await temp.cleanup();
  });

  it('with debounce_ms 0 reports each edge at once', async () => {
    const { temp, pins, sensor } = await gpioSetUp({ ...REED, debounce_ms: 0 });
    const seen: Position[] = [];
    sensor.onChange((position) => seen.push(position));
    await sensor.start();
    pins.set(SYSFS, 1);
    pins.set(SYSFS, 0);
    expect(seen).toEqual(['open', 'closed']);
    await sensor.stop();
    await temp.cleanup();
  });

  it('names the line and the group when the input cannot be opened', async () => {
    const { temp } = await gpioSetUp();
    const refusing = new GpioSensor({
      object: 'gate',
      config: REED,
      sysfsRoot: temp.dir,
      Gpio: class {
        constructor() {
          throw new Error('EACCES: permission denied');
        }
      } as never,
    });
    await expect(refusing.start()).rejects.toThrow(/GPIO 534 for the sensor of gate.*gpio group/);
    await temp.cleanup();
  });
});

describe('simulated sensor', () => {
  const pulse = async (s: ReturnType<typeof simulatedSetUp>) => {
    await s.driver.open(s.object);
  };

  it('auto-close: open after open_after_ms, closed again close_after_ms later', async () => {
    const s = simulatedSetUp({ ...TOGGLE, mode: 'auto-close' });
    const seen: [Position, number][] = [];
    s.sensor.onChange((position, at) => seen.push([position, at]));
    await s.driver.start();
    await s.sensor.start();
    await pulse(s);
    s.clock.advance(1500);
    expect(s.sensor.current()).toBe('open');
    s.clock.advance(20_000);
    expect(seen).toEqual([
      ['open', 1500],
      ['closed', 21_500],
    ]);
    await s.sensor.stop();
  });

  it('toggle: stays open until the next pulse', async () => {
    const s = simulatedSetUp();
    const seen: Position[] = [];
    s.sensor.onChange((position) => seen.push(position));
    await s.driver.start();
    await s.sensor.start();
    await pulse(s);
    s.clock.advance(60 * 60_000);
    expect(seen).toEqual(['open']);
    await pulse(s);
    s.clock.advance(1500);
    expect(seen).toEqual(['open', 'closed']);
    await s.sensor.stop();
  });

  it('stuck: never moves, until unstuck at run time', async () => {
    const s = simulatedSetUp({ ...TOGGLE, stuck: true });
    const seen: Position[] = [];
    s.sensor.onChange((position) => seen.push(position));
    await s.driver.start();
    await s.sensor.start();
    await pulse(s);
    s.clock.advance(10_000);
    expect(seen).toEqual([]);
    s.sensor.setStuck(false);
    await pulse(s);
    s.clock.advance(1500);
    expect(seen).toEqual(['open']);
    s.sensor.setStuck(true);
    await pulse(s);
    s.clock.advance(10_000);
    expect(s.sensor.current()).toBe('open');
    await s.sensor.stop();
  });

  it('a gate left open is still open after a restart', async () => {
    const stored = new Map<string, Position>();
    const memory = {
      read: (o: string) => stored.get(o) ?? null,
      write: (o: string, p: Position) => stored.set(o, p),
    };
    const s = simulatedSetUp();
    const first = new SimulatedSensor({
      object: 'gate',
      config: TOGGLE,
      pulses: s.driver,
      clock: s.clock,
      memory,
    });
    await s.driver.start();
    await first.start();
    await pulse(s);
    s.clock.advance(1500);
    await first.stop();
    const second = new SimulatedSensor({
      object: 'gate',
      config: TOGGLE,
      pulses: s.driver,
      clock: s.clock,
      memory,
    });
    await second.start();
    expect(second.current()).toBe('open');
    await second.stop();
  });
});
