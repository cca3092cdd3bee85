import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One package per user (docs/design.md section 0): shared/, cloud/, device/ and company/ each declare in their
 * package.json exactly the packages their code imports, with those of shared/ for the folders that import it,
 * so that what a board or a company installs is what it runs. The root is the published `gatelink`, which is
 * what a company installs: its dependencies are company/'s.
 */
const ROOT = resolve(import.meta.dirname, '../..');

interface Manifest {
  name: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
}

function manifest(folder: string): Manifest {
  return JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')) as Manifest;
}

/** The packages a folder's TypeScript files name (imports, `import()`, `import.meta.resolve`, `require`). */
function importedPackages(folder: string): Set<string> {
  const names = new Set<string>();
  const files = readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }).filter((file) =>
    /\.tsx?$/.test(file),
  );
  for (const file of files) {
    const code = readFileSync(join(ROOT, folder, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    // Statements at the start of a line (not the text of an example printed by a program), dynamic imports,
    // and the two ways a file finds a package by name without importing it.
    const pattern =
      /^(?:(?:import|export)\b[^'\n]*?\bfrom\s+|\}\s*from\s+|import\s+)'([^'.][^']*)'|\bimport\(\s*'([^'.][^']*)'|\.resolve\(\s*'([^'.][^']*)'|require\(import\.meta\.url\)\(\s*'([^'.][^']*)'/gm;
    for (const match of code.matchAll(pattern)) {
      const specifier = match.slice(1).find((found) => found !== undefined);
      if (specifier === undefined || specifier.startsWith('node:')) continue;
      const parts = specifier.split('/');
      names.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
    }
  }
  return names;
}

/** The folders each one imports by relative path, besides itself. */
const USES: Record<string, string[]> = {
  shared: [],
  device: ['shared'],
  company: ['shared'],
  cloud: ['shared'],
};

describe('the packages of the repository', () => {
  for (const [folder, uses] of Object.entries(USES)) {
    it(`${folder}/ depends on exactly what its code imports`, () => {
      const imported = new Set([folder, ...uses].flatMap((name) => [...importedPackages(name)]));
      expect(Object.keys(manifest(folder).dependencies ?? {}).sort()).toEqual([...imported].sort());
    });
  }

  it('gives the controller the Node.js of its boards, 20.19, as its floor', () => {
    expect(manifest('device').engines?.node).toBe('>=20.19');
  });

  it('publishes gatelink with the dependencies of company/, the companies’ package', () => {
    expect(manifest('.').name).toBe('gatelink');
    expect(manifest('.').dependencies).toEqual(manifest('company').dependencies);
  });
});
