import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  asciiDomainProblem,
  displayDomain,
  isAsciiDomain,
  mixesScripts,
  normalizeDomain,
} from '../../cloud/rules/companies/domains.js';

describe('mixesScripts: one label, judged per letter', () => {
  const mixed: [label: string, text: string][] = [
    ['Latin with a Cyrillic "а"', 'p\u0430ypal'],
    ['Greek with Latin', '\u03b1lpha'],
    ['Armenian with Latin', 'g\u0585ogle'],
    ['Latin with Arabic-Indic digits', 'abc\u0661'],
  ];

  it.each(mixed)('flags %s', (_label, text) => {
    expect(mixesScripts(text)).toBe(true);
  });

  const single: [label: string, text: string][] = [
    ['Latin alone', 'paypal'],
    ['Cyrillic alone', '\u043f\u0440\u0438\u043c\u0435\u0440'],
    ['Greek alone', '\u03c0\u03b1\u03c1\u03ac\u03b4\u03b5\u03b9\u03b3\u03bc\u03b1'],
    [
      'Japanese in Han, Hiragana and Katakana',
      '\u65e5\u672c\u8a9e\u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca',
    ],
    ['Katakana with the prolonged sound mark', '\u30c9\u30e1\u30a4\u30f3'],
    ['Korean in Hangul and Han', '\ud55c\uad6d\uc5b4\u6f22\u5b57'],
    ['digits and hyphens around Latin', 'a-1-2'],
    ['digits and hyphens around Cyrillic', '\u043f-1-2'],
    ['digits and hyphens alone', '1-2-3'],
  ];

  it.each(single)('does not flag %s', (_label, text) => {
    expect(mixesScripts(text)).toBe(false);
  });
});

describe('displayDomain: the spelling a customer sees', () => {
  it('shows the punycode beside a label that mixes scripts', () => {
    const ascii = domainToASCII('p\u0430ypal.com');
    expect(displayDomain(ascii)).toBe(`p\u0430ypal.com (${ascii})`);
  });

  it.each([
    ['a pure Cyrillic domain', '\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444'],
    ['a pure Greek domain', '\u03c0\u03b1\u03c1\u03ac\u03b4\u03b5\u03b9\u03b3\u03bc\u03b1.\u03b5\u03bb'],
    ['a Japanese domain', '\u65e5\u672c\u8a9e\u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca.jp'],
    ['a Latin domain with a national letter', 'g\u00e4rtner.example'],
  ])('shows %s in Unicode alone', (_label, unicode) => {
    expect(displayDomain(domainToASCII(unicode))).toBe(unicode);
  });

  it('judges each label on its own: a Cyrillic name under a Latin top label is not mixed', () => {
    const unicode = '\u043f\u0440\u0438\u043c\u0435\u0440.com';
    expect(displayDomain(domainToASCII(unicode))).toBe(unicode);
  });

  it('shows an ASCII domain as it is', () => {
    expect(displayDomain('acme.example')).toBe('acme.example');
  });
});

describe('normalizeDomain: the stored form', () => {
  it.each([
    ['Unicode input', 'g\u00e4rtner.example', 'xn--grtner-bua.example'],
    ['punycode input', 'xn--grtner-bua.example', 'xn--grtner-bua.example'],
    ['uppercase input', 'ACME.Example', 'acme.example'],
    ['uppercase punycode', 'XN--GRTNER-BUA.EXAMPLE', 'xn--grtner-bua.example'],
    ['a trailing dot', 'acme.example.', 'acme.example'],
    ['surrounding spaces', '  acme.example ', 'acme.example'],
    ['digits and hyphens', 'a-1.b2-c.example', 'a-1.b2-c.example'],
    ['an xn-- top label', 'acme.xn--p1ai', 'acme.xn--p1ai'],
  ])('accepts %s', (_label, input, stored) => {
    expect(normalizeDomain(input)).toBe(stored);
  });

  it.each([
    ['a single label', 'localhost'],
    ['a label of 64 characters', `${'a'.repeat(64)}.example`],
    ['a name over 253 characters', `${Array(64).fill('abc').join('.')}.example`],
    ['a top label that is all digits', 'acme.123'],
    ['an IPv4 address', '127.0.0.1'],
    ['an empty label', 'acme..example'],
    ['a leading hyphen', '-acme.example'],
    ['a reserved ab-- label', 'ab--cd.example'],
    ['a space inside', 'exa mple.com'],
  ])('refuses %s', (_label, input) => {
    expect(normalizeDomain(input)).toBeNull();
  });
});

describe('asciiDomainProblem: the ASCII form', () => {
  it('accepts a label of 63 characters', () => {
    expect(asciiDomainProblem(`${'a'.repeat(63)}.example`)).toBeNull();
  });

  it.each([
    ['a label of 64 characters', `${'a'.repeat(64)}.example`, 'use letters, digits and hyphens'],
    ['a top label that is all digits', 'acme.123', 'the last label must be a top-level domain'],
    ['a one-letter top label', 'acme.x', 'the last label must be a top-level domain'],
    ['punycode that does not decode', 'xn--zzzz.example', 'does not decode'],
    ['a trailing dot', 'acme.example.', 'use letters, digits and hyphens'],
    ['a single label', 'localhost', 'give a full domain'],
  ])('refuses %s, saying why', (_label, name, why) => {
    expect(asciiDomainProblem(name)).toContain(why);
  });

  it('accepts an xn-- top label that decodes', () => {
    expect(isAsciiDomain('acme.xn--p1ai')).toBe(true);
  });

  it('takes only the lowercase form: uppercase is normalised before, not here', () => {
    expect(isAsciiDomain('ACME.example')).toBe(false);
  });
});
