import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RelayObjectConfig } from '../../device/config.js';
import { openSafely } from '../../device/drivers/driver.js';
import { GpioMappingError, sysfsNumber } from '../../device/drivers/gpio-sysfs.js';
import { RelayGpioDriver } from '../../device/drivers/relay-gpio.js';
import { fakeGpio, fakeSysfs, PI4_CHIPS } from './fake-gpio.js';
import { tempDir } from './fixtures.js';

const relay = (patch: Partial<RelayObjectConfig> = {}): RelayObjectConfig => ({
  id: 'gate',
  label: 'Gate',
  kind: 'relay',
  line: 17,
  chip: 'auto',
  sysfs_base: 'auto',
  active_low: true,
  pulse_ms: 0,
  ...patch,
});

describe('GPIO line mapping through sysfs', () => {
  let root: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const temp = await tempDir();
    root = temp.dir;
    cleanup = temp.cleanup;
  });
  afterEach(() => cleanup());

  it('maps BCM 17 to sysfs 529 on a kernel whose pin controller starts at 512', async () => {
    await fakeSysfs(root, PI4_CHIPS);
    expect((await sysfsNumber(relay(), root)).gpio).toBe(529);
  });

  it('maps BCM 17 to sysfs 17 on an older kernel with base 0', async () => {
    await fakeSysfs(root, [
      { name: 'gpiochip0', label: 'pinctrl-bcm2835', base: 0, ngpio: 54 },
      { name: 'gpiochip504', label: 'raspberrypi-exp-gpio', base: 504, ngpio: 8 },
    ]);
    expect((await sysfsNumber(relay(), root)).gpio).toBe(17);
  });

  it('picks the RP1 header chip on a Raspberry Pi 5', async () => {
    await fakeSysfs(root, [
      { name: 'gpiochip512', label: 'gpio-brcmstb@107d508500', base: 512, ngpio: 32 },
      { name: 'gpiochip571', label: 'pinctrl-rp1', base: 571, ngpio: 54 },
    ]);
    expect((await sysfsNumber(relay(), root)).gpio).toBe(588);
  });

  it('uses the chip named by its label, and a fixed base without reading sysfs', async () => {
    await fakeSysfs(root, PI4_CHIPS);
    expect((await sysfsNumber(relay({ chip: 'raspberrypi-exp-gpio', line: 2 }), root)).gpio).toBe(572);
    expect((await sysfsNumber(relay({ sysfs_base: 0 }), join(root, 'missing'))).gpio).toBe(17);
  });

  it('says which chips exist when the label matches none, and refuses a line beyond the chip', async () => {
    await fakeSysfs(root, PI4_CHIPS);
    await expect(sysfsNumber(relay({ chip: 'nope' }), root)).rejects.toThrow(/pinctrl-bcm2711/);
    await expect(sysfsNumber(relay({ line: 58 }), root)).rejects.toThrow(GpioMappingError);
  });
});

describe('relay driver', () => {
  let root: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const temp = await tempDir();
    root = temp.dir;
    cleanup = temp.cleanup;
    await fakeSysfs(root, PI4_CHIPS);
  });
  afterEach(() => cleanup());

  it('exports an active-low relay already released (high), pulses it low, and releases it', async () => {
    const gpio = fakeGpio();
    const driver = new RelayGpioDriver({ objects: [relay()], sysfsRoot: root, Gpio: gpio.Gpio });
    await driver.start();
    expect(gpio.levels.get(529)).toBe(1);
    expect(await driver.open(relay())).toEqual({ outcome: 'opened' });
    expect(gpio.writes.map((w) => w.value)).toEqual([1, 0, 1]);
    expect(gpio.levels.get(529)).toBe(1);
    await driver.stop();
    expect(gpio.levels.get(529)).toBe(1);
    expect(gpio.exported.size).toBe(0);
  });

  it('drives an active-high relay the other way round', async () => {
    const gpio = fakeGpio();
    const config = relay({ active_low: false, line: 27 });
    const driver = new RelayGpioDriver({ objects: [config], sysfsRoot: root, Gpio: gpio.Gpio });
    await driver.start();
    expect(gpio.levels.get(539)).toBe(0);
    await driver.open(config);
    expect(gpio.writes.map((w) => w.value)).toEqual([0, 1, 0]);
    await driver.stop();
  });

  it('releases the relay when the pulse fails half way, and reports relay_fault', async () => {
    const gpio = fakeGpio();
    const driver = new RelayGpioDriver({
      objects: [relay()],
      sysfsRoot: root,
      Gpio: gpio.Gpio,
      sleep: async () => {
        throw new Error('interrupted');
      },
    });
    await driver.start();
    expect(await openSafely(driver, relay())).toMatchObject({ outcome: 'failed', reason: 'relay_fault' });
    expect(gpio.levels.get(529)).toBe(1);
    await driver.stop();
  });

  it('reports relay_fault when the pin does not take the level written', async () => {
    const gpio = fakeGpio({ stuck: true });
    const driver = new RelayGpioDriver({ objects: [relay()], sysfsRoot: root, Gpio: gpio.Gpio });
    await driver.start();
    expect(await driver.open(relay())).toMatchObject({ outcome: 'failed', reason: 'relay_fault' });
    expect(gpio.writes.at(-1)?.value).toBe(1);
    await driver.stop();
  });

  it('does not start with a chip that is not there, and leaves nothing exported', async () => {
    const gpio = fakeGpio();
    const objects = [relay(), relay({ id: 'other', line: 22, chip: 'missing-chip' })];
    const driver = new RelayGpioDriver({ objects, sysfsRoot: root, Gpio: gpio.Gpio });
    await expect(driver.start()).rejects.toThrow(/missing-chip/);
    expect(gpio.exported.size).toBe(0);
    expect(gpio.levels.get(529)).toBe(1);
  });
});
