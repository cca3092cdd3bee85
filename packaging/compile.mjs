#!/usr/bin/env node
// `npm run build`: compiles shared/, cloud/, device/ and company/ into dist/ with tsc (tsconfig.build.json,
// incremental), then copies every file under cloud/ that is not TypeScript into dist/cloud/ at the same place, so
// that what the cloud reads beside its code at run time (SQL functions, web assets) is
// found from dist/ as from the sources (docs/design.md section 12.3). The rule takes whatever is there, not a
// list of paths: folders inside cloud/ move without this file knowing.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Not copied: the sources tsc compiles, and the folder's package manifest and documentation. */
function readAtRunTime(path) {
  const extension = extname(path);
  if (extension === '.ts' || extension === '.tsx' || extension === '.md') return false;
  return path !== join(root, 'cloud', 'package.json');
}

/** TypeScript's compiler, a development dependency: a tree installed with --omit=dev has none. */
function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    process.stderr.write('build: TypeScript is not installed here: run "npm ci" first, then try again.\n');
    process.exit(1);
  }
}

const tsc = compiler();
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
} catch {
  process.stderr.write('build: tsc found errors (above)\n');
  process.exit(1);
}
if (existsSync(join(root, 'cloud'))) {
  cpSync(join(root, 'cloud'), join(root, 'dist', 'cloud'), { recursive: true, filter: readAtRunTime });
}
