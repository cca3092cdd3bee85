import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { companyInitial } from '../../cloud/rules/companies/display.js';

/**
 * The stand-in for a company's logo (docs/design.md section 10): the first grapheme of its name, upper-cased.
 * Names that start with two ASCII characters skip the grapheme segmenter; the answer must be the same.
 */
function segmenterInitial(name: string): string {
  const first = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
    .segment(name.trim())
    [Symbol.iterator]()
    .next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase();
}

describe('companyInitial', () => {
  it.each([
    ['Demo Cleaning', 'D'],
    ['  acme', 'A'],
    ['x', 'X'],
    ['', '?'],
    ['   ', '?'],
    ['e\u0301clair', 'E\u0301'],
    ['Ölwerk', 'Ö'],
    ['élan', 'É'],
    ['👩‍🔧 Fixers', '👩‍🔧'],
    ['علی‌اکبر', 'ع'],
    ['1&1', '1'],
  ])('of %j is %j', (name, initial) => {
    expect(companyInitial(name)).toBe(initial);
  });

  it('is what the grapheme segmenter says, for any name', () => {
    const any = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
    // An ASCII letter and then anything: a combining accent or a joiner after it keeps the two together.
    const asciiFirst = fc
      .tuple(fc.constantFrom('a', 'Z', ' ', '1'), any)
      .map(([first, rest]) => first + rest);
    fc.assert(
      fc.property(fc.oneof(any, asciiFirst), (name) => companyInitial(name) === segmenterInitial(name)),
      { numRuns: 2000 },
    );
  });
});
