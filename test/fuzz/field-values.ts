import fc from 'fast-check';

/**
 * Values and payload shapes that the property suites put where a device message or a command expects one
 * field (shared/README.md, "Messages"): every JSON type, the numbers a time or a count must not be, strings
 * a text field must not hold, deep nesting and long arrays. Raw JSON text (nesting too deep for
 * JSON.stringify, duplicate or `__proto__` keys) travels as a `RawJson` and is spliced in by `serialize`.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export type FieldValue = unknown;

const EDGE_NUMBERS = [
  0,
  -0,
  -1,
  1.5,
  -1.5,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  // The last millisecond of year 9999 and the one after; the last a JavaScript Date holds and the one after.
  253_402_300_799_999,
  253_402_300_800_000,
  8_640_000_000_000_000,
  8_640_000_000_000_001,
  1e21,
  1e308,
  -1e308,
  Number.MIN_VALUE,
];

const EDGE_STRINGS = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '0x10',
  '1',
  'null',
  'true',
  'open',
  'opened',
  'gate',
  'D0123456789',
  '\u0000',
  'a\u0000b',
  '\t',
  '\u001b[2J',
  '\u007f',
  '\u0085',
  '\ud800',
  'x\udfffy',
  '\u202egate',
  '\ufeff',
  '\uffff',
  '💥',
  'Brána č. 1',
  '__proto__',
  'constructor',
];

/** An array nested `depth` deep, as JSON text. */
export const deepNesting = fc
  .integer({ min: 1, max: 4000 })
  .map((depth) => new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`));

/** Something in every place where JSON puts a value, weighted towards what a schema is likeliest to get wrong. */
export const fieldValue: fc.Arbitrary<FieldValue> = fc.oneof(
  { arbitrary: fc.constantFrom<FieldValue>(...EDGE_NUMBERS, ...EDGE_STRINGS, null, true, false), weight: 6 },
  { arbitrary: fc.integer(), weight: 2 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.string({ maxLength: 80 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ minLength: 33, maxLength: 300 }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.array(fc.integer(), { minLength: 100, maxLength: 1500 }), weight: 1 },
  { arbitrary: deepNesting, weight: 1 },
);

/** Keys that a hand-written merge would turn into a prototype change, and keys of any kind. */
export const extraKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'sig ', 'V', ''),
  fc.string({ maxLength: 20 }),
);

/** Bytes that are not UTF-8: lone continuation bytes, overlong forms, truncated sequences, surrogates. */
export const invalidUtf8 = fc.constantFrom(
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xfe],
  [0xff],
  [0xe2, 0x82],
);

/**
 * JSON text of `body`; a `RawJson` anywhere in it is written as its text, and `extra` entries are appended
 * to the top object as raw members (so that a key may repeat, or be `__proto__`, as only raw JSON allows).
 */
export function serialize(body: unknown, extra: readonly [string, FieldValue][] = []): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (!(value instanceof RawJson)) return value;
    raws.push(value.text);
    return `\u0001raw${raws.length - 1}\u0001`;
  });
  const members = extra.map(([key, value]) => `${JSON.stringify(key)}:${serialize(value)}`);
  const withExtra =
    members.length === 0 || !text.endsWith('}')
      ? text
      : `${text.slice(0, -1)}${text === '{}' ? '' : ','}${members.join(',')}}`;
  return withExtra.replace(/"\\u0001raw(\d+)\\u0001"/g, (_match, index: string) => raws[Number(index)]!);
}

/** `text` as bytes with `bytes` inserted at `at` (clamped to the text's length). */
export function withBytesAt(text: string, at: number, bytes: readonly number[]): Buffer {
  const encoded = Buffer.from(text, 'utf8');
  const cut = Math.min(at, encoded.length);
  return Buffer.concat([encoded.subarray(0, cut), Buffer.from(bytes), encoded.subarray(cut)]);
}
