import { mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BootUsageError, guardBoot, MAX_TRIAL_STARTS } from '../../device/boot/guard.js';
import { tempDir } from './fixtures.js';

/** The boot guard's decisions on a home (docs/design.md section 12.4.3), without starting a daemon. */
let dir: { dir: string; cleanup: () => Promise<void> };
let home: string;

beforeEach(async () => {
  dir = await tempDir();
  home = join(dir.dir, 'home');
  for (const name of ['old', 'new']) mkdirSync(join(home, 'releases', name), { recursive: true });
  symlinkSync('releases/new', join(home, 'current'));
  symlinkSync('releases/old', join(home, 'known-good'));
});
afterEach(() => dir.cleanup());

function onTrial(starts: number): void {
  writeFileSync(
    join(home, 'update.json'),
    JSON.stringify({
      v: 1,
      phase: 'trial',
      rollout_id: 2,
      version: '2.0.0',
      from: 'old',
      to: 'new',
      starts,
      at: 1,
    }),
  );
}

const record = () => JSON.parse(readFileSync(join(home, 'update.json'), 'utf8'));
const argv = () => ['--home', home, 'run', '--config', '/etc/gatelink/device.yaml'];

describe('the boot guard', () => {
  it('runs current with the arguments after --home', () => {
    expect(guardBoot(argv())).toEqual({
      home,
      program: join(home, 'current', 'bin', 'gatelink-device.mjs'),
      args: ['run', '--config', '/etc/gatelink/device.yaml'],
    });
  });

  it('counts the starts of a release on trial, and rolls it back past the limit', () => {
    onTrial(0);
    for (let start = 1; start <= MAX_TRIAL_STARTS; start++) {
      guardBoot(argv());
      expect(record()).toMatchObject({ phase: 'trial', starts: start });
      expect(readlinkSync(join(home, 'current'))).toBe('releases/new');
    }
    guardBoot(argv(), () => 99);
    expect(readlinkSync(join(home, 'current'))).toBe('releases/old');
    expect(record()).toMatchObject({ phase: 'rolled_back', reason: 'crashed', at: 99 });
    expect(record().detail).toMatch(/did not come up healthy in 3 starts/);
  });

  it('records an update stopped before its link switch as failed, and runs the old release', () => {
    onTrial(0);
    writeFileSync(join(home, 'update.json'), JSON.stringify({ ...record(), to: 'newer' }));
    guardBoot(argv());
    expect(record()).toMatchObject({ phase: 'failed', detail: 'stopped before the switch' });
  });

  it('refuses to run without --home', () => {
    expect(() => guardBoot(['run'])).toThrow(BootUsageError);
  });
});
