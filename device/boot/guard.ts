import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { linkTarget, readUpdateRecord, switchLink, writeUpdateRecord } from './home-layout.js';

/**
 * The boot guard (docs/design.md section 12.4.3), run by systemd from the known-good release:
 * `gatelink-boot.mjs --home <home> <arguments of gatelink-device>`. Before the daemon starts it counts a start
 * of a release on trial; a release started MAX_TRIAL_STARTS times without coming up healthy is given up:
 * `current` goes back to `known-good` and update.json says rolled_back, crashed. Then the daemon of whatever
 * `current` is runs in this process. Only node: imports, so that a broken newer release cannot break it.
 */
export const MAX_TRIAL_STARTS = 3;

export interface BootPlan {
  home: string;
  /** The program to run: `<home>/current/bin/gatelink-device.mjs`. */
  program: string;
  /** The arguments after `--home <home>`. */
  args: string[];
}

export class BootUsageError extends Error {}

export function parseBootArguments(argv: readonly string[]): { home: string; args: string[] } {
  if (argv[0] !== '--home' || argv[1] === undefined || argv[1] === '') {
    throw new BootUsageError('usage: gatelink-boot.mjs --home <folder> <gatelink-device arguments>');
  }
  return { home: resolve(argv[1]), args: argv.slice(2) };
}

/** Counts the start of a release on trial and rolls back past the limit; returns what to run. */
export function guardBoot(argv: readonly string[], now: () => number = Date.now): BootPlan {
  const { home, args } = parseBootArguments(argv);
  const record = readUpdateRecord(home);
  const current = linkTarget(home, 'current');
  const knownGood = linkTarget(home, 'known-good');
  if (record?.phase === 'trial') {
    if (current !== record.to) {
      // Stopped between writing update.json and switching `current`: the new release never ran.
      writeUpdateRecord(home, {
        ...record,
        phase: 'failed',
        reason: 'crashed',
        detail: 'stopped before the switch',
        at: now(),
      });
    } else if (record.starts >= MAX_TRIAL_STARTS && knownGood !== null && knownGood !== current) {
      switchLink(home, 'current', knownGood);
      writeUpdateRecord(home, {
        ...record,
        phase: 'rolled_back',
        reason: 'crashed',
        detail: `${record.version} did not come up healthy in ${record.starts} starts`,
        at: now(),
      });
    } else {
      writeUpdateRecord(home, { ...record, starts: record.starts + 1 });
    }
  }
  // No `current` at all (removed by hand): the known-good release still runs.
  const run = linkTarget(home, 'current') === null && knownGood !== null ? 'known-good' : 'current';
  return { home, program: join(home, run, 'bin', 'gatelink-device.mjs'), args };
}

/** True when `home` is an installed home the daemon can update. */
export function isUpdatableHome(home: string): boolean {
  return (
    existsSync(join(home, 'releases')) &&
    linkTarget(home, 'current') !== null &&
    linkTarget(home, 'known-good') !== null
  );
}
