import { readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { linkTarget, syncFolder } from '../boot/home-layout.js';

/** The folder name of a release under `<home>/releases`: `<version>-<first 12 hex of its bundle's SHA-256>`. */
export function releaseName(version: string, sha256: string): string {
  return `${version}-${sha256.slice(0, 12)}`;
}

/** What an earlier update left half done (power loss, a kill): removed before the next one starts. */
export function removeLeftovers(home: string): void {
  const releases = join(home, 'releases');
  for (const name of readdirSync(releases)) {
    if (name.endsWith('.partial')) rmSync(join(releases, name), { recursive: true, force: true });
  }
}

/** A complete, synced `.partial` tree takes its final name; a release of that name already there is replaced. */
export function completeRelease(home: string, name: string): void {
  const releases = join(home, 'releases');
  const final = join(releases, name);
  if (linkTarget(home, 'current') === name || linkTarget(home, 'known-good') === name) {
    throw new Error(`${name} is the running or the known-good release`);
  }
  rmSync(final, { recursive: true, force: true });
  renameSync(join(releases, `${name}.partial`), final);
  syncFolder(releases);
}

/** Keeps `current`, `known-good` and `previous`; removes every other release. */
export function pruneReleases(home: string, previous: string): void {
  const keep = new Set([linkTarget(home, 'current'), linkTarget(home, 'known-good'), previous]);
  const releases = join(home, 'releases');
  for (const name of readdirSync(releases)) {
    if (!keep.has(name)) rmSync(join(releases, name), { recursive: true, force: true });
  }
}
