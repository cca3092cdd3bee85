import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * Company domains are stored and compared in their ASCII (punycode) form, lowercase; customers are shown
 * the Unicode spelling, with the punycode beside it where the spelling mixes scripts (a look-alike risk).
 */
const ASCII_DOMAIN =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|xn--[a-z0-9-]{1,59})$/;

export function isAsciiDomain(text: string): boolean {
  return ASCII_DOMAIN.test(text);
}

/** Accepts a domain as an operator types it (Unicode or punycode) and returns the stored form, or null. */
export function normalizeDomain(input: string): string | null {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '')).toLowerCase();
  return ascii && isAsciiDomain(ascii) ? ascii : null;
}

export function toUnicodeDomain(ascii: string): string {
  return domainToUnicode(ascii) || ascii;
}

/** The spelling a customer sees: Unicode, and the punycode beside it when the Unicode mixes scripts. */
export function displayDomain(ascii: string): string {
  const unicode = toUnicodeDomain(ascii);
  if (unicode === ascii) return ascii;
  return mixesScripts(unicode) ? `${unicode} (${ascii})` : unicode;
}

const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Armenian}/u];

function mixesScripts(text: string): boolean {
  return text.split('.').some((label) => SCRIPTS.filter((script) => script.test(label)).length > 1);
}
