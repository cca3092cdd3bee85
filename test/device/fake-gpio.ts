import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GpioConstructor, GpioLike } from '../../device/drivers/relay-gpio.js';

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
