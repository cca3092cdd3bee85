import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { extract, list, type ReadEntry } from 'tar';
import type { ReleaseManifest } from '../../shared/releases/manifest.js';

export class BundleError extends Error {}

/** Entry types a bundle may hold: regular files and folders, nothing that points elsewhere. */
const ALLOWED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);
/** Headers that only carry metadata for the entry after them. */
const META_TYPES = new Set(['ExtendedHeader', 'GlobalExtendedHeader']);

/**
 * Unpacks a bundle into `folder` (new) in two passes: the first reads every entry and refuses the bundle if
 * any is not a file or a folder, or its path is absolute, climbs with `..` or is not plain; only then the
 * second writes. So a refused bundle writes nothing at all, inside the folder or outside it.
 */
export async function unpackBundle(file: string, folder: string): Promise<void> {
  const problems: string[] = [];
  await list({
    file,
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      const problem = entryProblem(entry);
      if (problem) problems.push(problem);
    },
  }).catch((error: Error) => {
    throw new BundleError(`not a gzipped tar: ${error.message}`);
  });
  if (problems.length > 0) throw new BundleError(problems.slice(0, 3).join('; '));
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  await extract({ file, cwd: folder, strict: true, preservePaths: false, preserveOwner: false });
}

function entryProblem(entry: ReadEntry): string | null {
  if (META_TYPES.has(entry.type)) return null;
  if (!ALLOWED_TYPES.has(entry.type)) return `${entry.path}: a ${entry.type}, not a file or a folder`;
  const path = entry.path;
  if (path === '' || isAbsolute(path) || /^[A-Za-z]:/.test(path)) return `${path}: an absolute path`;
  const parts = posix.normalize(path).split('/');
  if (path.split('/').includes('..') || parts[0] === '..') return `${path}: climbs out with ..`;
  if (path.includes('\\') || path.includes('\0')) return `${path}: not a plain path`;
  return null;
}

/** `release.json` at the bundle's root must name the release the manifest describes. */
export function checkReleaseFile(folder: string, manifest: ReleaseManifest): void {
  let release: Record<string, unknown>;
  try {
    release = JSON.parse(readFileSync(join(folder, 'release.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    throw new BundleError('no readable release.json at its root');
  }
  for (const key of ['name', 'version', 'arch', 'node_abi'] as const) {
    if (release[key] !== manifest[key]) {
      throw new BundleError(
        `release.json says ${key} ${String(release[key])}, the manifest ${manifest[key]}`,
      );
    }
  }
  for (const needed of [join('bin', 'gatelink-device.mjs'), join('bin', 'gatelink-boot.mjs')]) {
    try {
      closeSync(openSync(join(folder, needed), 'r'));
    } catch {
      throw new BundleError(`no ${needed}`);
    }
  }
}

/** Every file and folder of the tree written to the card before the release is named complete. */
export function syncTree(folder: string): void {
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() || entry.isDirectory()) syncPath(join(entry.parentPath, entry.name));
  }
  syncPath(folder);
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
