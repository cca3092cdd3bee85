import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Maps a line number on a GPIO chip to the number the sysfs interface (and so onoff) uses.
 *
 * The sysfs number is the chip's `base` plus the line. On older Raspberry Pi kernels the SoC's chip had base 0,
 * so BCM 17 was sysfs 17; since Linux 6.6 bases are allocated dynamically from 512, so BCM 17 is sysfs 529 on a
 * Pi 4 (gpiochip512) and something else again on a Pi 5. Reading `/sys/class/gpio/gpiochip<N>/{base,label,ngpio}`
 * keeps the config file in BCM numbers on every kernel.
 */
export const DEFAULT_SYSFS_ROOT = '/sys/class/gpio';

/**
 * The chips that drive the 40-pin header of Raspberry Pi models, in order of preference: RP1 on a Pi 5,
 * the BCM2711 on a Pi 4 / 400 / CM4, the BCM2835 family on earlier models. `chip: auto` picks the first present.
 */
const HEADER_CHIP_LABELS = ['pinctrl-rp1', 'pinctrl-bcm2711', 'pinctrl-bcm2835'];

export interface GpioChip {
  /** The folder name, e.g. gpiochip512. */
  name: string;
  label: string;
  base: number;
  ngpio: number;
}

export class GpioMappingError extends Error {
  override name = 'GpioMappingError';
}

/**
 * This machine has no GPIO chip to drive: no sysfs GPIO interface at all, or one without any chip. Told apart
 * from a wrong line or chip label, since what to do differs: run on the controller, turn GPIO on, or try
 * without hardware with simulated objects (hardware/README.md, "Try it on a laptop").
 */
export class NoGpioChipError extends GpioMappingError {
  override name = 'NoGpioChipError';

  constructor(readonly root: string) {
    super(`no GPIO chip at ${root}`);
  }
}

export async function listGpioChips(root: string = DEFAULT_SYSFS_ROOT): Promise<GpioChip[]> {
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NoGpioChipError(root);
    throw new GpioMappingError(
      `cannot read ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'}): this kernel has no sysfs GPIO interface`,
    );
  }
  const chips: GpioChip[] = [];
  for (const name of entries.filter((entry) => /^gpiochip\d+$/.test(entry)).sort()) {
    const read = async (file: string) => (await readFile(join(root, name, file), 'utf8')).trim();
    const base = Number.parseInt(await read('base'), 10);
    const ngpio = Number.parseInt(await read('ngpio'), 10);
    const label = await read('label').catch(() => '');
    if (Number.isInteger(base) && Number.isInteger(ngpio)) chips.push({ name, label, base, ngpio });
  }
  return chips;
}

export interface SysfsLine {
  /** The configured line number on the chip. */
  line: number;
  /** `auto` or the chip's label. */
  chip: string;
  /** `auto` or a fixed base that overrides what sysfs says. */
  sysfs_base: 'auto' | number;
}

/** The sysfs GPIO number for a line, with the chip it was found on (none when the base was given). */
export async function sysfsNumber(
  spec: SysfsLine,
  root: string = DEFAULT_SYSFS_ROOT,
): Promise<{ gpio: number; chip: GpioChip | null }> {
  if (spec.sysfs_base !== 'auto') return { gpio: spec.sysfs_base + spec.line, chip: null };
  const chips = await listGpioChips(root);
  if (chips.length === 0) throw new NoGpioChipError(root);
  const chip = pickChip(chips, spec.chip);
  if (spec.line >= chip.ngpio) {
    throw new GpioMappingError(
      `line ${spec.line} does not exist on ${chip.name} (${chip.label}), which has lines 0 to ${chip.ngpio - 1}`,
    );
  }
  return { gpio: chip.base + spec.line, chip };
}

function pickChip(chips: GpioChip[], wanted: string): GpioChip {
  const labels = chips.map((chip) => `${chip.name} "${chip.label}"`).join(', ');
  if (wanted !== 'auto') {
    const match = chips.filter((chip) => chip.label === wanted);
    if (match.length === 1) return match[0]!;
    if (match.length === 0) throw new GpioMappingError(`no gpiochip labelled "${wanted}"; found ${labels}`);
    throw new GpioMappingError(`several gpiochips are labelled "${wanted}"; set sysfs_base instead`);
  }
  for (const label of HEADER_CHIP_LABELS) {
    const match = chips.filter((chip) => chip.label === label);
    if (match.length === 1) return match[0]!;
  }
  if (chips.length === 1) return chips[0]!;
  throw new GpioMappingError(
    `cannot tell which gpiochip to use among ${labels}; set chip to one of these labels`,
  );
}
