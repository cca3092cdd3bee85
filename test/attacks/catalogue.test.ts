import { describe, expect, it } from 'vitest';
import { ATTACKS } from './catalogue.js';
import { tagsBySource } from './tags.js';

/** The attack list and the tests stay in step: every attack is tried, and every tag names a listed attack. */
describe('the attack list', () => {
  const ids = ATTACKS.map((attack) => attack.id);
  const sources = tagsBySource();
  const tagged = new Set([...sources.values()].flat());

  it('names each attack once', () => {
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('has a test that tries every attack', () => {
    expect(ids.filter((id) => !tagged.has(id))).toEqual([]);
  });

  it('lists every attack a test says it tries', () => {
    const unlisted = [...sources].flatMap(([file, tags]) =>
      tags.filter((tag) => !ids.includes(tag)).map((tag) => `${file}: ${tag}`),
    );
    expect(unlisted).toEqual([]);
  });
});
