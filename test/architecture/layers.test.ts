import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The drawing of docs/design.md section 0 kept true: shared/ imports none of the programs; cloud/ and device/
 * never import each other; company/ imports neither; and inside cloud/ a file imports its own floor and those
 * below, never one above (foundation < rules < links < faces < the top of cloud/). Folders of cloud/ do not
 * import each other in a circle either, except the circles listed in KNOWN_CYCLES, each a debt to pay.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const PROGRAMS = ['shared', 'cloud', 'device', 'company', 'bin'];
const FLOORS = ['foundation', 'rules', 'links', 'faces'] as const;

/** One relative import: where it is written and the file it names, both from the repository's root. */
interface Edge {
  from: string;
  line: number;
  to: string;
}

/** Every relative import of a file (static, `export from`, side-effect and dynamic `import()`), by line. */
function importsOf(file: string, text: string): Edge[] {
  // Comments are blanked, keeping their line breaks, so that an example in a comment is no import.
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/^[ \t]*\/\/.*$/gm, '');
  const edges: Edge[] = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|^[ \t]*import\s+)'(\.{1,2}\/[^']+)'/gm;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1] ?? '';
    const line = code.slice(0, match.index).split('\n').length;
    edges.push({ from: file, line, to: resolveTarget(file, specifier) });
  }
  return edges;
}

/** The file a specifier names: `./x.js` is `./x.ts` or `./x.tsx` in the source tree. */
function resolveTarget(file: string, specifier: string): string {
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target]) {
    if (existsSync(join(ROOT, candidate))) return candidate;
  }
  return target;
}

function program(path: string): string {
  return path.split('/')[0] ?? '';
}

/** 0 for foundation up to 4 for the top of cloud/; undefined outside cloud/. */
function floorOf(path: string): number | undefined {
  if (program(path) !== 'cloud') return undefined;
  const floor = FLOORS.indexOf(path.split('/')[1] as (typeof FLOORS)[number]);
  return floor === -1 ? FLOORS.length : floor;
}

const FORBIDDEN_PROGRAMS: Record<string, readonly string[]> = {
  shared: ['cloud', 'device', 'company', 'bin'],
  cloud: ['device', 'company'],
  device: ['cloud', 'company'],
  company: ['cloud', 'device'],
};

/** The edges that break the drawing, each as `file:line -> target` with why. */
function violations(edges: readonly Edge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const from = program(edge.from);
    const to = program(edge.to);
    const where = `${edge.from}:${edge.line} -> ${edge.to}`;
    if (FORBIDDEN_PROGRAMS[from]?.includes(to)) found.push(`${where} (${from}/ must not import ${to}/)`);
    const fromFloor = floorOf(edge.from);
    const toFloor = floorOf(edge.to);
    if (fromFloor !== undefined && toFloor !== undefined && toFloor > fromFloor) {
      found.push(`${where} (runs up from ${floorName(fromFloor)} to ${floorName(toFloor)})`);
    }
  }
  return found;
}

function floorName(floor: number): string {
  return FLOORS[floor] ?? 'the top of cloud/';
}

/** The folder a cloud file belongs to: `cloud/rules/companies`, `cloud/foundation/web`, `cloud/jobs`, `cloud`. */
function folderOf(path: string): string {
  const parts = path.split('/');
  if (FLOORS.includes(parts[1] as (typeof FLOORS)[number])) {
    return parts.length > 3 ? parts.slice(0, 3).join('/') : parts.slice(0, 2).join('/');
  }
  return parts.length > 2 ? parts.slice(0, 2).join('/') : 'cloud';
}

/** The circles among cloud's folders (strongly connected groups of more than one), each sorted. */
function folderCycles(edges: readonly Edge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (program(edge.from) !== 'cloud' || program(edge.to) !== 'cloud') continue;
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === to) continue;
    graph.set(from, (graph.get(from) ?? new Set()).add(to));
    if (!graph.has(to)) graph.set(to, new Set());
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

function sourceFiles(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
    }
  };
  if (existsSync(join(ROOT, folder))) walk(folder);
  return found;
}

function treeEdges(): Edge[] {
  return PROGRAMS.flatMap(sourceFiles).flatMap((file) =>
    importsOf(file, readFileSync(join(ROOT, file), 'utf8')),
  );
}

/** Circles among cloud's folders that the tree has today; none may be added. */
const KNOWN_CYCLES: string[][] = [];

describe('the layers', () => {
  it('finds an import that runs up a floor, or across programs, naming the file and line', () => {
    const bad: Edge[] = [
      { from: 'cloud/rules/opening/open.ts', line: 9, to: 'cloud/faces/company-api/route.ts' },
      { from: 'cloud/foundation/web/page.tsx', line: 4, to: 'cloud/context.ts' },
      { from: 'shared/errors.ts', line: 1, to: 'cloud/foundation/config.ts' },
      { from: 'device/runtime/controller.ts', line: 3, to: 'cloud/foundation/clock.ts' },
      { from: 'company/client/index.ts', line: 2, to: 'device/config.ts' },
      { from: 'cloud/faces/console/routes.ts', line: 5, to: 'cloud/rules/companies/companies.ts' },
      { from: 'cloud/links/mail/mailer.ts', line: 4, to: 'shared/errors.ts' },
    ];
    expect(violations(bad)).toEqual([
      'cloud/rules/opening/open.ts:9 -> cloud/faces/company-api/route.ts (runs up from rules to faces)',
      'cloud/foundation/web/page.tsx:4 -> cloud/context.ts (runs up from foundation to the top of cloud/)',
      'shared/errors.ts:1 -> cloud/foundation/config.ts (shared/ must not import cloud/)',
      'device/runtime/controller.ts:3 -> cloud/foundation/clock.ts (device/ must not import cloud/)',
      'company/client/index.ts:2 -> device/config.ts (company/ must not import device/)',
    ]);
  });

  it('reads static, re-exported and dynamic imports, and not those in comments', () => {
    const text = [
      "import { a } from './a.js';",
      "export { b } from '../b.js';",
      "const c = await import('./c.js');",
      "// import { d } from './d.js';",
      "/* import { e } from './e.js'; */",
      "import './f.js';",
    ].join('\n');
    expect(importsOf('cloud/rules/x/y.ts', text).map((edge) => `${edge.line} ${edge.to}`)).toEqual([
      '1 cloud/rules/x/a.js',
      '2 cloud/rules/b.js',
      '3 cloud/rules/x/c.js',
      '6 cloud/rules/x/f.js',
    ]);
  });

  it('finds a circle between folders', () => {
    const edges: Edge[] = [
      { from: 'cloud/rules/a/x.ts', line: 1, to: 'cloud/rules/b/y.ts' },
      { from: 'cloud/rules/b/y.ts', line: 1, to: 'cloud/rules/a/z.ts' },
      { from: 'cloud/rules/b/y.ts', line: 2, to: 'cloud/foundation/clock.ts' },
    ];
    expect(folderCycles(edges)).toEqual([['cloud/rules/a', 'cloud/rules/b']]);
  });

  it('holds in the tree: no import runs up a floor or across programs', () => {
    const edges = treeEdges();
    expect(edges.length).toBeGreaterThan(1000);
    expect(violations(edges)).toEqual([]);
  });

  it('holds in the tree: no circle between cloud folders beyond the known ones', () => {
    expect(folderCycles(treeEdges())).toEqual(KNOWN_CYCLES);
  });
});
