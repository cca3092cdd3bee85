import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GpioConstructor, GpioLike } from '../../device/drivers/relay-gpio.js';
import type { InputGpioConstructor, InputGpioLike } from '../../device/sensors/gpio-sensor.js';

/** A sysfs GPIO folder like the one a Raspberry Pi 4 on a 6.6 kernel has. */
export async function fakeSysfs(
  root: string,
  chips: { name: string; label: string; base: number; ngpio: number }[],
) {
  for (const chip of chips) {
    const dir = join(root, chip.name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'base'), `${chip.base}\n`);
    await writeFile(join(dir, 'label'), `${chip.label}\n`);
    await writeFile(join(dir, 'ngpio'), `${chip.ngpio}\n`);
  }
  await writeFile(join(root, 'export'), '');
}

export const PI4_CHIPS = [
  { name: 'gpiochip512', label: 'pinctrl-bcm2711', base: 512, ngpio: 58 },
  { name: 'gpiochip570', label: 'raspberrypi-exp-gpio', base: 570, ngpio: 8 },
];

/** Raw pin levels by sysfs number, with every write in order; stands in for onoff's Gpio. */
export function fakeGpio(options: { stuck?: boolean } = {}) {
  const levels = new Map<number, 0 | 1>();
  const writes: { gpio: number; value: 0 | 1 }[] = [];
  const exported = new Set<number>();
  const Gpio: GpioConstructor = class implements GpioLike {
    readonly #gpio: number;
    constructor(gpio: number, direction: 'high' | 'low') {
      this.#gpio = gpio;
      exported.add(gpio);
      levels.set(gpio, direction === 'high' ? 1 : 0);
    }
    readSync(): 0 | 1 {
      return levels.get(this.#gpio) ?? 0;
    }
    writeSync(value: 0 | 1): void {
      writes.push({ gpio: this.#gpio, value });
      if (!options.stuck) levels.set(this.#gpio, value);
    }
    unexport(): void {
      exported.delete(this.#gpio);
    }
  };
  return { Gpio, levels, writes, exported };
}

/**
 * Input pins by sysfs number, as onoff's Gpio with edge `both` sees them: `set` changes a level and, when it
 * changed, calls the pin's watchers as an edge interrupt would.
 */
export function fakeInputGpio() {
  const levels = new Map<number, 0 | 1>();
  const watchers = new Map<number, ((error: Error | null | undefined, value: 0 | 1) => void)[]>();
  const exported = new Set<number>();
  const Gpio: InputGpioConstructor = class implements InputGpioLike {
    readonly #gpio: number;
    constructor(gpio: number, direction: 'in', edge: 'both') {
      if (direction !== 'in' || edge !== 'both') throw new Error('expected an input with edge both');
      this.#gpio = gpio;
      exported.add(gpio);
    }
    readSync(): 0 | 1 {
      return levels.get(this.#gpio) ?? 0;
    }
    watch(callback: (error: Error | null | undefined, value: 0 | 1) => void): void {
      watchers.set(this.#gpio, [...(watchers.get(this.#gpio) ?? []), callback]);
    }
    unwatchAll(): void {
      watchers.delete(this.#gpio);
    }
    unexport(): void {
      exported.delete(this.#gpio);
    }
  };
  const set = (gpio: number, value: 0 | 1) => {
    if ((levels.get(gpio) ?? 0) === value) return;
    levels.set(gpio, value);
    for (const watcher of watchers.get(gpio) ?? []) watcher(null, value);
  };
  return { Gpio, levels, watchers, exported, set };
}
