import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecutedStore, type ExecutedStoreOptions } from '../../device/runtime/executed.js';
import { fakeClock, tempDir } from './fixtures.js';

const HOUR = 60 * 60_000;

describe('executed-command store', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let clock: ReturnType<typeof fakeClock>;
  let stores: ExecutedStore[];
  let file: string;

  /** A store on the log in `dir`; a second one on the same file is the controller after a crash or restart. */
  const store = (options: Partial<ExecutedStoreOptions> = {}) => {
    const created = new ExecutedStore({ file, now: clock.now, ...options });
    stores.push(created);
    return created;
  };
  const loaded = async (options: Partial<ExecutedStoreOptions> = {}) => {
    const created = store(options);
    await created.load();
    return created;
  };
  const logLines = async () => (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    clock = fakeClock();
    stores = [];
    file = join(dir, 'executed.log');
  });
  afterEach(async () => {
    for (const created of stores) await created.close();
    await cleanup();
  });

  it('holds an id on disk once add resolves: a store made after a crash knows it', async () => {
    const first = await loaded();
    await first.add('a', clock.now() + 5000);
    // No close: the process died right after the driver started.
    const afterCrash = await loaded();
    expect(afterCrash.has('a')).toBe(true);
    expect(await logLines()).toEqual([`a ${clock.now() + 5000 + HOUR}`]);
  });

  it('appends one line per id and keeps the ones already there', async () => {
    const first = await loaded();
    await first.add('a', clock.now() + 5000);
    await first.close();
    const second = await loaded();
    await second.add('b', clock.now() + 5000);
    expect(await logLines()).toHaveLength(2);
    const third = await loaded();
    expect([third.has('a'), third.has('b'), third.has('c')]).toEqual([true, true, false]);
  });

  it('ignores a torn last line and does not glue the next id to it', async () => {
    const until = clock.now() + HOUR;
    await writeFile(file, `a ${until}\nb ${until}`);
    const s = await loaded();
    expect([s.has('a'), s.has('b')]).toEqual([true, false]);
    await s.add('c', clock.now() + 5000);
    expect(await logLines()).toEqual([`a ${until}`, `c ${clock.now() + 5000 + HOUR}`]);
    const again = await loaded();
    expect([again.has('a'), again.has('b'), again.has('c')]).toEqual([true, false, true]);
  });

  it('starts a fresh line when it appends to a torn log it did not load', async () => {
    const until = clock.now() + HOUR;
    await writeFile(file, `a ${until}\nb 17`);
    await store().add('c', clock.now() + 5000);
    const s = await loaded();
    expect([s.has('a'), s.has('b'), s.has('c')]).toEqual([true, false, true]);
  });

  it('skips lines it cannot parse and ids that have expired', async () => {
    const now = clock.now();
    await writeFile(file, `a ${now + HOUR}\n\0\0\0garbage\nb ${now - 1}\nc ${now + 10}\n`);
    const s = await loaded();
    expect([s.has('a'), s.has('b'), s.has('c')]).toEqual([true, false, true]);
    expect(s.size).toBe(2);
  });

  it('serializes concurrent adds: every line is whole', async () => {
    const s = await loaded();
    const ids = Array.from({ length: 50 }, (_, i) => `id-${i}`);
    await Promise.all(ids.map((id) => s.add(id, clock.now() + 5000)));
    const lines = await logLines();
    expect(lines).toHaveLength(50);
    for (const line of lines) expect(line).toMatch(/^id-\d+ \d+$/);
    const again = await loaded();
    expect(ids.every((id) => again.has(id))).toBe(true);
  });

  it('rewrites the log with the live ids once it holds many more lines than that', async () => {
    const s = await loaded({ retentionMs: 1000 });
    for (let i = 0; i < 300; i++) await s.add(`old-${i}`, clock.now());
    clock.advance(2000);
    const fresh = Array.from({ length: 10 }, (_, i) => `new-${i}`);
    for (const id of fresh) await s.add(id, clock.now() + 5000);
    await s.close();
    const lines = await logLines();
    expect(lines).toHaveLength(10);
    expect(lines.every((line) => line.startsWith('new-'))).toBe(true);
    const again = await loaded({ retentionMs: 1000 });
    expect(fresh.every((id) => again.has(id))).toBe(true);
    expect(again.has('old-0')).toBe(false);
    // Appending after the rewrite goes to the new file.
    await again.add('later', clock.now() + 5000);
    expect((await loaded()).has('later')).toBe(true);
  });

  it('removes the temporary file of a rewrite that a power cut interrupted', async () => {
    const until = clock.now() + HOUR;
    await writeFile(file, `a ${until}\n`);
    await writeFile(`${file}.0123456789ab.tmp`, `a ${until}\nb`);
    const s = await loaded();
    expect([s.has('a'), s.has('b')]).toEqual([true, false]);
    expect(await readdir(dir)).toEqual(['executed.log']);
  });

  it('compacts on load a log that is mostly expired', async () => {
    const now = clock.now();
    const expired = Array.from({ length: 300 }, (_, i) => `old-${i} ${now - 1}\n`).join('');
    await writeFile(file, `${expired}live ${now + HOUR}\n`);
    const s = await loaded();
    expect(s.has('live')).toBe(true);
    expect(await logLines()).toEqual([`live ${now + HOUR}`]);
  });

  it('moves the ids of executed.json into the log, then removes it', async () => {
    const legacyFile = join(dir, 'executed.json');
    const now = clock.now();
    await writeFile(legacyFile, JSON.stringify({ a: now + HOUR, gone: now - 1 }));
    const s = await loaded({ legacyFile });
    expect([s.has('a'), s.has('gone')]).toEqual([true, false]);
    await expect(stat(legacyFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await logLines()).toEqual([`a ${now + HOUR}`]);
    expect((await loaded({ legacyFile })).has('a')).toBe(true);
  });

  it('merges executed.json with a log left by a migration that a power cut interrupted', async () => {
    const legacyFile = join(dir, 'executed.json');
    const now = clock.now();
    await writeFile(legacyFile, JSON.stringify({ a: now + HOUR, b: now + HOUR }));
    await appendFile(file, `a ${now + HOUR}\nc ${now + HOUR}\n`);
    const s = await loaded({ legacyFile });
    expect([s.has('a'), s.has('b'), s.has('c')]).toEqual([true, true, true]);
    expect((await logLines()).sort()).toEqual([`a ${now + HOUR}`, `b ${now + HOUR}`, `c ${now + HOUR}`]);
  });

  it('refuses to start on an executed.json that is not JSON, rather than forget its ids', async () => {
    const legacyFile = join(dir, 'executed.json');
    await writeFile(legacyFile, '{"a": 1');
    await expect(store({ legacyFile }).load()).rejects.toThrow(/not valid JSON/);
  });
});
