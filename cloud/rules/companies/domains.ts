import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * Company domains are stored and compared in their ASCII (punycode) form, lowercase; customers are shown
 * the Unicode spelling, with the punycode beside it where the spelling mixes scripts (a look-alike risk).
 * The key-file fetcher and the display path use these same rules.
 */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Top-level domains are letters or punycode; a numeric last label would make the host an IPv4 address. */
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** What is wrong with a domain in lowercase ASCII, said to the person who gave it, or null when it is usable. */
export function asciiDomainProblem(name: string): string | null {
  const labels = name.split('.');
  if (name.length > 253 || labels.length < 2) return 'give a full domain such as acme.example';
  for (const label of labels) {
    if (!LABEL.test(label)) {
      return 'use letters, digits and hyphens between dots, punycode (xn--) for national characters';
    }
    if (label.slice(2, 4) === '--' && !label.startsWith('xn--')) return `"${label}" is a reserved form`;
  }
  if (!TOP_LABEL.test(labels.at(-1) ?? '')) return 'the last label must be a top-level domain';
  if (name.includes('xn--') && !punycodeDecodes(name)) return 'a punycode (xn--) label in it does not decode';
  return null;
}

/**
 * Whether every punycode label decodes, and back to the same ASCII. Node.js 20 answers an undecodable label with
 * an empty domain, Node.js 24 hands the label back as it was; a label that decoded is never `xn--` any more.
 */
function punycodeDecodes(name: string): boolean {
  const unicode = domainToUnicode(name);
  if (unicode.split('.').some((label) => label.startsWith('xn--'))) return false;
  return unicode !== '' && domainToASCII(unicode) === name;
}

export function isAsciiDomain(text: string): boolean {
  return asciiDomainProblem(text) === null;
}

/** Accepts a domain as an operator types it (Unicode or punycode) and returns the stored form, or null. */
export function normalizeDomain(input: string): string | null {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '')).toLowerCase();
  return ascii && isAsciiDomain(ascii) ? ascii : null;
}

export function toUnicodeDomain(ascii: string): string {
  return domainToUnicode(ascii) || ascii;
}

/** The spelling a customer sees: Unicode, and the punycode beside it when a label mixes scripts. */
export function displayDomain(ascii: string): string {
  const unicode = toUnicodeDomain(ascii);
  if (unicode === ascii) return ascii;
  return unicode.split('.').some(mixesScripts) ? `${unicode} (${ascii})` : unicode;
}

/**
 * The scripts told apart. A character that belongs to none of them and to no script at all (digits, hyphens,
 * combining marks shared by every script) counts for nothing; one of another script counts as "other".
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Mongolian',
  'Ethiopic',
  'Cherokee',
  'Hangul',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
].map((script) => ({ script, test: new RegExp(`\\p{Script_Extensions=${script}}`, 'u') }));

const NO_SCRIPT = /^[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]$/u;

/**
 * Writing systems that mix scripts by nature (Unicode TS #39, "augmented script set"): Japanese writes Han,
 * Hiragana and Katakana together, Korean Han and Hangul, Chinese Han and Bopomofo.
 */
const WRITING_SYSTEMS: Record<string, readonly string[]> = {
  Han: ['Japanese', 'Korean', 'Chinese'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Chinese'],
};

/**
 * Whether a label mixes letters of more than one script, judged per character by its Script_Extensions: the
 * label is single-script when one script (or one writing system such as Japanese) covers all its characters.
 */
export function mixesScripts(label: string): boolean {
  let common: ReadonlySet<string> | null = null;
  for (const char of label) {
    const scripts = scriptsOf(char);
    if (!scripts) continue;
    common = common ? shared(common, scripts) : scripts;
    if (common.size === 0) return true;
  }
  return false;
}

function shared(a: ReadonlySet<string>, b: ReadonlySet<string>): ReadonlySet<string> {
  return new Set([...a].filter((script) => b.has(script)));
}

/** The scripts a character may be written in, with their writing systems; null for one of no script. */
function scriptsOf(char: string): Set<string> | null {
  const scripts = SCRIPTS.filter(({ test }) => test.test(char)).map(({ script }) => script);
  if (scripts.length === 0) return NO_SCRIPT.test(char) ? null : new Set(['other']);
  return new Set(scripts.flatMap((script) => [script, ...(WRITING_SYSTEMS[script] ?? [])]));
}
