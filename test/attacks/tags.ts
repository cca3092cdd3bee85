import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** How a test names the attack it tries: `[attack:<id>]` in its own name or in a describe around it. */
export const TAG = /\[attack:([a-z0-9.-]+)\]/g;

export const ROOT = resolve(import.meta.dirname, '../..');

/** The attack ids a name carries. */
export function tagsIn(name: string): string[] {
  return [...name.matchAll(TAG)].map((match) => match[1]!);
}

/**
 * Every test file below test/, and every suite that test files run for several kinds of one thing
 * (`*-suite.ts`, such as the broker suite), relative to the project's root.
 */
export function testFiles(folder = join(ROOT, 'test')): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') || entry.name.endsWith('-suite.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The tags written in each test file's source, by file. */
export function tagsBySource(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of testFiles()) {
    const tags = tagsIn(readFileSync(join(ROOT, file), 'utf8'));
    if (tags.length > 0) found.set(file, tags);
  }
  return found;
}
