import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What a company installs (docs/design.md section 11.6): the client's files import shared/, the key file reader,
 * Node's built-ins and zod, never cloud/ or device/, so that nothing of the server ships with it.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'company/client');
const ALLOWED = [/^node:/, /^zod$/, /^\.\/[a-z-]+\.js$/, /^\.\.\/\.\.\/shared\//, /^\.\.\/key-file\.js$/];

/** Every module a file names in an import or export `from`, its comments left out. */
function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/\bfrom\s+'([^']+)'/g)].map((match) => match[1]!);
}

describe('the client package', () => {
  it('imports only shared/, the key file, Node and zod', () => {
    const files = readdirSync(CLIENT).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('index.ts');
    const outside = files.flatMap((name) =>
      specifiers(readFileSync(join(CLIENT, name), 'utf8'))
        .filter((specifier) => !ALLOWED.some((allowed) => allowed.test(specifier)))
        .map((specifier) => `${name}: ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it('is the package entry, with its types', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(manifest.exports['./client']).toEqual({
      types: './dist/company/client/index.d.ts',
      default: './dist/company/client/index.js',
    });
  });
});
