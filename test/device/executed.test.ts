import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecutedIds, removeEarlierRecords } from '../../device/runtime/executed.js';
import { fakeClock, tempDir } from './fixtures.js';

describe('executed command ids', () => {
  let clock: ReturnType<typeof fakeClock>;

  beforeEach(() => {
    clock = fakeClock();
  });

  it('knows an id from the moment it is added', () => {
    const ids = new ExecutedIds({ now: clock.now });
    ids.add('a', clock.now() + 5000);
    expect([ids.has('a'), ids.has('b')]).toEqual([true, false]);
  });

  it('forgets an id only long after its command expired', () => {
    const ids = new ExecutedIds({ now: clock.now, retentionMs: 60_000 });
    ids.add('a', clock.now() + 5000);
    clock.advance(5000 + 59_000);
    expect(ids.has('a')).toBe(true);
    clock.advance(2000);
    expect(ids.has('a')).toBe(false);
    ids.add('b', clock.now() + 5000);
    expect(ids.size).toBe(1);
  });

  it('keeps at most maxEntries ids, forgetting the ones that expire first', () => {
    const ids = new ExecutedIds({ now: clock.now, maxEntries: 3 });
    for (const [id, lifetime] of [
      ['late', 9000],
      ['early', 1000],
      ['middle', 5000],
      ['new', 7000],
    ] as const)
      ids.add(id, clock.now() + lifetime);
    expect(['late', 'early', 'middle', 'new'].map((id) => ids.has(id))).toEqual([true, false, true, true]);
  });
});

describe('executed ids of earlier versions', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('removes the files in which earlier versions kept them, and nothing else', async () => {
    await writeFile(join(dir, 'executed.log'), 'a 1\n');
    await writeFile(join(dir, 'executed.json'), '{"a": 1}');
    await writeFile(join(dir, 'status.json'), '{}');
    await removeEarlierRecords(dir);
    expect(await readdir(dir)).toEqual(['status.json']);
    await removeEarlierRecords(dir);
    expect(await readdir(dir)).toEqual(['status.json']);
  });
});
