import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';

/**
 * The board's home (docs/design.md section 12.4.3): `releases/<name>/` complete release trees, `current` and
 * `known-good` relative links to one of them, and `update.json`, the update in progress or last finished. Only
 * node: imports: the boot guard runs this from the known-good release even when the newer one cannot load.
 * Every change is a new file or link renamed over the old one, then the folder synced, so that after a power
 * loss at any moment both links point at a whole release.
 */
export type HomeLink = 'current' | 'known-good';

export type UpdatePhase = 'trial' | 'healthy' | 'rolled_back' | 'failed';

/** `<home>/update.json`. */
export interface UpdateRecord {
  v: 1;
  phase: UpdatePhase;
  rollout_id: number;
  /** The version being tried (or rolled back from). */
  version: string;
  /** The release folder names (under releases/) before and after the switch. */
  from: string;
  to: string;
  /** How many times the boot guard started `to` while on trial. */
  starts: number;
  reason?: 'crashed' | 'not_healthy';
  detail?: string;
  at: number;
}

export const UPDATE_FILE = 'update.json';

/** The release folder name a link points at (`releases/<name>` -> `<name>`), or null when there is no link. */
export function linkTarget(home: string, link: HomeLink): string | null {
  try {
    return basename(readlinkSync(join(home, link)));
  } catch {
    return null;
  }
}

/** Points `link` at `releases/<name>`: a new link renamed over the old one, then the folder synced. */
export function switchLink(home: string, link: HomeLink, name: string): void {
  const temporary = join(home, `${link}.new`);
  rmSync(temporary, { force: true });
  symlinkSync(join('releases', name), temporary);
  renameSync(temporary, join(home, link));
  syncFolder(home);
}

export function readUpdateRecord(home: string): UpdateRecord | null {
  try {
    const value = JSON.parse(readFileSync(join(home, UPDATE_FILE), 'utf8')) as Partial<UpdateRecord>;
    const phases: readonly string[] = ['trial', 'healthy', 'rolled_back', 'failed'];
    if (value.v !== 1 || typeof value.phase !== 'string' || !phases.includes(value.phase)) return null;
    if (typeof value.to !== 'string' || typeof value.from !== 'string') return null;
    if (typeof value.rollout_id !== 'number' || typeof value.version !== 'string') return null;
    return { ...value, starts: typeof value.starts === 'number' ? value.starts : 0 } as UpdateRecord;
  } catch {
    return null;
  }
}

/** Written whole: a temporary file synced, renamed over the old one, then the folder synced. */
export function writeUpdateRecord(home: string, record: UpdateRecord): void {
  const temporary = join(home, `${UPDATE_FILE}.new`);
  const fd = openSync(temporary, 'w', 0o644);
  try {
    writeFileSync(fd, `${JSON.stringify(record, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, join(home, UPDATE_FILE));
  syncFolder(home);
}

export function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
