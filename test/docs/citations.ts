import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

/**
 * Citations in the repository's comments and documents, and the ones that point nowhere.
 *
 * What counts as a citation, so that a stale one fails `test/docs/citations.test.ts`:
 *
 * - A repository path: a token that starts at a word boundary with one of the top folders (`cloud/`,
 *   `device/`, `shared/`, `company/`, `hardware/`, `test/`, `docs/`, `bin/`, `deploy/`) and ends either in `/`
 *   (a folder) or in a file extension of {@link EXTENSIONS}. A token followed by `*`, `<`, `{`, `$` or `[` is a
 *   glob or a placeholder (`cloud/*` + `/`, `cloud/<folder>/`), and one holding `...` is an elision: neither
 *   counts. A token inside a URL or a longer path (after `/`, `.`, `@`, a letter) does not start a citation.
 * - Folders that test runs make (`test/artifacts/`) count as present.
 * - A relative path (`./x.ts`, `../y/z.md`) on a comment line of a source file, resolved from that file's
 *   folder. A `.js` citation is satisfied by the `.ts` or `.tsx` it is compiled from, as in imports.
 * - A design section: `docs/design.md section 4`, `design.md sections 6 and 11.4`, `design 10.5`,
 *   `section 7.2 of the design`, and a bare `section 12.1` unless the words just before it name another
 *   document (an RFC, MQTT, a README or another `.md` file). Inside docs/design.md a bare section is its own.
 *   Each number must be a heading of docs/design.md. Line breaks and comment leaders (`*`, `//`, `#`) between
 *   the words are read as one space, since a citation often spans two comment lines.
 * - A document outside the repository: the company API's contract document, the decision log and the style
 *   notes the project was started from are not here, so no comment may send a reader to them; a relative path
 *   that leaves the repository is refused too.
 */

/** Extensions a cited file may end in. */
export const EXTENSIONS = [
  'ts',
  'tsx',
  'js',
  'mjs',
  'cjs',
  'md',
  'json',
  'yaml',
  'yml',
  'sh',
  'sql',
  'service',
  'rules',
  'css',
  'html',
  'svg',
  'png',
  'txt',
  'conf',
];

/** Folders that test runs make (and .gitignore names), cited by the code that writes into them. */
const MADE_BY_RUNS = ['test/artifacts/'];

const TOP_FOLDERS = ['cloud', 'device', 'shared', 'company', 'hardware', 'test', 'docs', 'bin', 'deploy'];

/** Spelled in parts so this file does not cite them itself. */
const OUTSIDE_DOCUMENTS = [
  ['company-access-api', 'md'],
  ['decisions', 'md'],
  ['style', 'md'],
].map((parts) => parts.join('.'));

const EXTENSION = new RegExp(`\\.(?:${EXTENSIONS.join('|')})$`);
const REPO_PATH = new RegExp(`(?<![\\w.\\/@~-])(?:${TOP_FOLDERS.join('|')})\\/[\\w.\\/-]*`, 'g');
const RELATIVE_PATH = /(?<![\w./@~-])\.\.?\/[\w./-]+/g;
const PLACEHOLDER_NEXT = /[*<{$[]/;
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*|#)/;
const OUTSIDE = new RegExp(
  `(?<![\\w-])(?:${OUTSIDE_DOCUMENTS.map((name) => name.replace('.', '\\.')).join('|')})`,
  'g',
);

const NUMBER = String.raw`\d+(?:\.\d+)*`;
const LIST = String.raw`${NUMBER}(?:(?:,\s*|,?\s+and\s+|\s+to\s+|\s+or\s+)${NUMBER})*`;
/** `design.md section 4`, `design.md sections 6 and 11.4`, `design.md 6`, `design 10.5`. */
const DESIGN_NAMED = new RegExp(
  String.raw`\bdesign(?:\.md)?\`?,?\s+(?:sections?\s+)?(${LIST})(?![\w.]*\w)`,
  'g',
);
/** `section 7.2 of the design`, or a bare `section 12.1`. */
const SECTION_BARE = new RegExp(String.raw`\bsections?\s+(${LIST})(?![\w.]*\w)(\s+of\s+the\s+design)?`, 'g');
/** Words that name another document just before a bare section number. */
const OTHER_DOCUMENT =
  /(?:\bRFC\s*\d+|\bMQTT\b|\bREADME\b|\b(?!design\.md)[\w-]+\.md\b|\bspec\b)(?![\s\S]*\bdesign\b)/i;

export interface Repository {
  /** Whether the path, relative to the repository's root, exists. */
  exists(path: string): boolean;
  /** The section numbers of docs/design.md's headings: `0`, `1`, `1.1`, ... */
  designSections: ReadonlySet<string>;
}

/** The numbers of a design document's headings (`## 10. ...`, `### 10.5 ...`). */
export function headingNumbers(design: string): Set<string> {
  const numbers = new Set<string>();
  for (const match of design.matchAll(/^#{2,}\s+(\d+(?:\.\d+)*)\.?\s/gm)) numbers.add(match[1] as string);
  return numbers;
}

/** Each stale citation of one file, as `file:line cites ...`; `file` is relative to the repository's root. */
export function staleCitations(file: string, text: string, repository: Repository): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  const isMarkdown = file.endsWith('.md');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    for (const match of line.matchAll(REPO_PATH)) {
      const cited = citedPath(match[0], line[(match.index ?? 0) + match[0].length]);
      if (cited && !pathExists(cited, repository)) found.push(`${where} cites missing ${cited}`);
    }
    if (!isMarkdown && COMMENT_LINE.test(line)) {
      for (const match of line.matchAll(RELATIVE_PATH)) {
        const token = citedPath(match[0], line[(match.index ?? 0) + match[0].length]);
        if (!token) continue;
        const cited = join(dirname(file), token).split(sep).join('/');
        if (cited.startsWith('../')) found.push(`${where} cites ${token}, outside the repository`);
        else if (!pathExists(cited, repository)) found.push(`${where} cites missing ${token} (${cited})`);
      }
    }
    for (const match of line.matchAll(OUTSIDE))
      found.push(`${where} cites ${match[0]}, which is not in the repository`);
  });
  found.push(...staleSections(file, text, repository.designSections));
  return found;
}

/** The token as a citation, or undefined when it is a glob, a placeholder, an elision or no file or folder. */
function citedPath(token: string, next: string | undefined): string | undefined {
  if (next !== undefined && PLACEHOLDER_NEXT.test(next)) return undefined;
  if (token.includes('...')) return undefined;
  const trimmed = token.replace(/\.+$/, '');
  if (trimmed.endsWith('/') || EXTENSION.test(trimmed)) return trimmed;
  return undefined;
}

function pathExists(path: string, repository: Repository): boolean {
  if (MADE_BY_RUNS.some((folder) => path.startsWith(folder)) || repository.exists(path)) return true;
  if (!path.endsWith('.js')) return false;
  const stem = path.slice(0, -'.js'.length);
  return repository.exists(`${stem}.ts`) || repository.exists(`${stem}.tsx`);
}

function staleSections(file: string, text: string, sections: ReadonlySet<string>): string[] {
  const { flat, lineAt } = flatten(text);
  const found = new Map<string, string>();
  const report = (offset: number, list: string) => {
    for (const number of list.match(new RegExp(NUMBER, 'g')) ?? []) {
      const citation = `${file}:${lineAt(offset)} cites docs/design.md section ${number}`;
      if (!sections.has(number)) found.set(`${offset} ${number}`, citation);
    }
  };
  const named = new Set<number>();
  for (const match of flat.matchAll(DESIGN_NAMED)) {
    const offset = (match.index ?? 0) + match[0].indexOf(match[1] as string);
    named.add(offset);
    report(offset, match[1] as string);
  }
  const ownSections = file === 'docs/design.md';
  for (const match of flat.matchAll(SECTION_BARE)) {
    const offset = (match.index ?? 0) + match[0].indexOf(match[1] as string);
    if (named.has(offset)) continue;
    const before = flat.slice(Math.max(0, (match.index ?? 0) - 60), match.index);
    const ofTheDesign = match[2] !== undefined;
    if (ofTheDesign || ownSections || !OTHER_DOCUMENT.test(before)) report(offset, match[1] as string);
  }
  return [...found.values()];
}

/** The text with each line break and the comment leader after it read as one space, and a map back to lines. */
function flatten(text: string): { flat: string; lineAt: (offset: number) => number } {
  const starts: number[] = [];
  let flat = '';
  for (const line of text.split('\n')) {
    starts.push(flat.length);
    flat += `${line.replace(/^\s*(?:\/\/|\/\*\*?|\*(?!\/)|#+)?\s*/, '')} `;
  }
  const lineAt = (offset: number) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if ((starts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  return { flat, lineAt };
}

/** Folders never scanned: installed packages, build output and what test runs leave behind. */
const SKIPPED = new Set(['node_modules', 'dist', '.git', '.data', '.cache', 'coverage', '.ci-results']);
const SKIPPED_PATHS = new Set(['test/artifacts', 'test/api-contract/generated']);
/** Files that hold made-up citations on purpose (this scanner's, and the floors' made-up imports). */
const SELF = new Set([
  'test/docs/citations.ts',
  'test/docs/citations.test.ts',
  'test/architecture/layers.test.ts',
]);
const SCANNED = /\.(?:ts|tsx|mts|mjs|cjs|sh|md|json)$/;
const NOT_SCANNED = new Set(['package-lock.json']);

/** The files whose citations are checked, relative to the root. */
export function scannedFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !entry.name.startsWith('.bench-') && !SKIPPED_PATHS.has(path))
          walk(path);
      } else if (
        entry.isFile() &&
        SCANNED.test(entry.name) &&
        !NOT_SCANNED.has(entry.name) &&
        !SELF.has(path)
      ) {
        files.push(path);
      }
    }
  };
  walk('');
  return files.sort();
}

/** Every stale citation in the repository at `root`. */
export function repositoryStaleCitations(root: string): string[] {
  const repository: Repository = {
    exists: (path) => existsSync(resolve(root, path)),
    designSections: headingNumbers(readFileSync(join(root, 'docs/design.md'), 'utf8')),
  };
  return scannedFiles(root).flatMap((file) =>
    staleCitations(file, readFileSync(join(root, file), 'utf8'), repository),
  );
}

export const repositoryRoot = resolve(import.meta.dirname, '../..');
