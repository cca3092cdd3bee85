import { list, type ReadEntry } from 'tar';

/** A bundle's entries as a controller's unpacking meets them: path, kind and mode, in the bundle's order. */
export interface BundleEntry {
  path: string;
  type: string;
  mode: number;
}

export async function bundleEntries(file: string): Promise<BundleEntry[]> {
  const entries: BundleEntry[] = [];
  await list({
    file,
    onReadEntry: (entry: ReadEntry) => {
      entries.push({ path: entry.path, type: entry.type, mode: (entry.mode ?? 0) & 0o7777 });
    },
  });
  return entries;
}

/** Entries a safe unpacking must never meet: absolute paths, `..` parts, and anything but files and folders. */
export function unsafeEntries(entries: readonly BundleEntry[]): BundleEntry[] {
  return entries.filter(
    (entry) =>
      entry.path.startsWith('/') ||
      entry.path.split('/').includes('..') ||
      !['File', 'Directory'].includes(entry.type),
  );
}
