import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { linkTarget, readUpdateRecord, type UpdateRecord } from '../boot/home-layout.js';

/**
 * The installed home this program runs from (docs/design.md section 12.4.3), for commands that run without the
 * boot guard (`status`): GATELINK_HOME when the guard set it, else the home whose `releases/` holds this very
 * release (a board's tree runs as `<home>/releases/<name>/dist/device/...`). Null in a checkout.
 */
export function installedHome(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.GATELINK_HOME) return env.GATELINK_HOME;
  // dist/device/updates/installed-home.js -> the release folder, three levels up.
  const release = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const releases = dirname(release);
  if (basename(releases) !== 'releases') return null;
  const home = dirname(releases);
  return existsSync(resolve(home, 'current')) ? home : null;
}

/** What `status` shows of the home: which releases the links name, and the last update. */
export interface HomeView {
  home: string;
  current: string | null;
  knownGood: string | null;
  update: UpdateRecord | null;
}

export function viewHome(home: string): HomeView {
  return {
    home,
    current: linkTarget(home, 'current'),
    knownGood: linkTarget(home, 'known-good'),
    update: readUpdateRecord(home),
  };
}
