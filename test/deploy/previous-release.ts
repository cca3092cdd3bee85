import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The previous release as a checkout of its own (deploy/previous-release names its commit): a git worktree in
 * a temporary folder, running on this tree's installed packages when they hold every package its lock file
 * names at the same version, as they do when releases only add packages. Null, with the reason, when it
 * cannot be had here: no git history (a shallow clone) or packages that differ.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

export interface PreviousRelease {
  commit: string;
  folder: string;
  remove(): Promise<void>;
}

export function previousCommit(): string {
  return readFileSync(join(ROOT, 'deploy', 'previous-release'), 'utf8')
    .split('\n')[0]!
    .trim();
}

export async function checkOutPreviousRelease(): Promise<PreviousRelease | string> {
  const commit = previousCommit();
  try {
    await run('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT });
  } catch {
    return `the previous release ${commit.slice(0, 10)} is not in this clone's history (a shallow clone?): git fetch --unshallow`;
  }
  const { stdout: lock } = await run('git', ['show', `${commit}:package-lock.json`], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const differing = packagesDiffering(lock, readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  if (differing.length > 0) {
    return `the previous release needs other packages than this tree's node_modules (${differing.slice(0, 3).join(', ')})`;
  }
  const parent = mkdtempSync(join(tmpdir(), 'gatelink-previous-'));
  const folder = join(parent, 'release');
  await run('git', ['worktree', 'add', '--detach', folder, commit], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
  return {
    commit,
    folder,
    async remove() {
      await run('git', ['worktree', 'remove', '--force', folder], { cwd: ROOT }).catch(() => {});
      if (existsSync(parent)) rmSync(parent, { recursive: true, force: true });
    },
  };
}

/** The packages of the `previous` lock that the `current` lock does not install at the same version. */
function packagesDiffering(previous: string, current: string): string[] {
  type Lock = { packages?: Record<string, { version?: string; link?: boolean }> };
  const before = (JSON.parse(previous) as Lock).packages ?? {};
  const now = (JSON.parse(current) as Lock).packages ?? {};
  return Object.entries(before)
    .filter(([path, entry]) => path.startsWith('node_modules/') && entry.version && !entry.link)
    .filter(([path, entry]) => now[path]?.version !== entry.version)
    .map(([path, entry]) => `${path.slice('node_modules/'.length)}@${entry.version}`);
}
