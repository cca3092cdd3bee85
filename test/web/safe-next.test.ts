import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { safeNext } from '../../cloud/foundation/web/web-deps.js';

/**
 * `next=`, where a customer goes after signing in (docs/design.md section 10.2): a path on this site or the
 * fallback, never another host, never an error, and always a value a Location header can carry.
 */
const HOSTILE: [string, string][] = [
  ['TAB inside //', '/\t/evil.example'],
  ['TAB, percent-encoded', '/%09/evil.example'],
  ['LF inside //', '/\n/evil.example'],
  ['LF, percent-encoded', '/%0A/evil.example'],
  ['CR inside //', '/\r/evil.example'],
  ['CR LF header injection', '/barriers\r\nSet-Cookie: x=1'],
  ['CR LF, percent-encoded', '/barriers%0D%0ASet-Cookie:%20x=1'],
  ['VT', '/\v/evil.example'],
  ['FF', '/\f/evil.example'],
  ['DEL', '/\u007f/evil.example'],
  ['NUL', '/\u0000/evil.example'],
  ['NUL, percent-encoded', '/%00/evil.example'],
  ['a C1 control', '/\u0085/evil.example'],
  ['NBSP', '/\u00a0/evil.example'],
  ['U+2028', '/\u2028/evil.example'],
  ['U+2029', '/barriers\u2029'],
  ['a zero-width space', '/\u200b/evil.example'],
  ['a space', '/ /evil.example'],
  ['slashes, percent-encoded', '%2F%2Fevil.example'],
  ['the second slash percent-encoded', '/%2Fevil.example'],
  ['a backslash', '/\\evil.example'],
  ['a backslash in the path', '/barriers\\x'],
  ['a backslash, percent-encoded', '/%5Cevil.example'],
  ['a protocol-relative URL', '//evil.example'],
  ['an absolute URL', 'https://evil.example'],
  ['a javascript: URL', 'javascript:alert(1)'],
  ['a relative path', 'barriers'],
  ['dot segments that end as //', '/.//evil.example'],
  ['undecodable percent-encoding', '/barriers%E0%A4%A'],
  ['a lone percent sign', '/barriers/100%'],
  ['longer than 512 characters', `/${'a'.repeat(512)}`],
  ['empty', ''],
];

describe('safeNext', () => {
  it.each(HOSTILE)('[attack:web.next-invisible-characters] ignores %s', (_what, value) => {
    expect(safeNext(value)).toBe('/barriers');
    expect(safeNext(value, '')).toBe('');
  });

  it.each([undefined, null, 42, ['/barriers'], { next: '/x' }])('ignores %s, which is no text', (value) => {
    expect(safeNext(value)).toBe('/barriers');
  });

  it.each([
    '/barriers/abc?x=1#y',
    '/c/ABCDEFGHJKMN',
    '/barriers?next=%2F%2Fnot-a-host-here',
    `/${'a'.repeat(511)}`,
  ])('keeps the path on this site %s', (value) => {
    expect(safeNext(value)).toBe(value);
  });

  it('gives any other path on this site in a form a Location header can carry', () => {
    const kept = safeNext('/c/café?name=Zoë');
    expect(kept).toBe('/c/caf%C3%A9?name=Zo%C3%AB');
    expect(() => validateHeaderValue('location', kept)).not.toThrow();
  });
});
