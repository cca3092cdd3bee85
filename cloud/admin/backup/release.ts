import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * This release's version: the root package.json's, found upward from this file, which sits at the same depth
 * below the root in the sources (cloud/admin/backup/) and one deeper in a build (dist/cloud/admin/backup/).
 */
export function releaseVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    const file = join(folder, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'gatelink' && typeof manifest.version === 'string') return manifest.version;
    }
    folder = dirname(folder);
  }
  return 'unknown';
}
