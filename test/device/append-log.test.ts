import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppendLog } from '../../device/append-log.js';
import { tempDir } from './fixtures.js';

describe('append log', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  let logs: AppendLog[];

  /** A log on `file`; a second one on the same file is the controller after a crash or a restart. */
  const log = () => {
    const created = new AppendLog(file);
    logs.push(created);
    return created;
  };
  const loaded = async () => {
    const created = log();
    return { log: created, contents: await created.load() };
  };
  const onDisk = async () => (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, 'records.log');
    logs = [];
  });
  afterEach(async () => {
    for (const each of logs) await each.close();
    await cleanup();
  });

  it('has a record on disk once its append resolves, for a log opened after a crash', async () => {
    const { log: first } = await loaded();
    await first.append('a\n');
    // No close: the process died here.
    expect((await loaded()).contents).toEqual({ lines: ['a'], torn: false });
  });

  it('cuts off a torn last line on load, and the next record starts on a line of its own', async () => {
    await writeFile(file, 'a\nb-torn');
    const { log: l, contents } = await loaded();
    expect(contents).toEqual({ lines: ['a'], torn: true });
    await l.append('c\n');
    expect(await onDisk()).toEqual(['a', 'c']);
  });

  it('starts a fresh line when it appends to a torn file it did not load', async () => {
    await writeFile(file, 'a\nb-torn');
    await log().append('c\n');
    expect((await loaded()).contents.lines).toEqual(['a', 'b-torn', 'c']);
  });

  it('keeps concurrent appends whole and in the order asked', async () => {
    const { log: l } = await loaded();
    const records = Array.from({ length: 50 }, (_, i) => `record-${i}`);
    await Promise.all(records.map((record) => l.append(`${record}\n`)));
    expect(await onDisk()).toEqual(records);
    expect(l.lines).toBe(50);
  });

  it('rewrites the file atomically, after the appends asked before, and appends to the new file', async () => {
    const { log: l } = await loaded();
    void l.append('a\n');
    await l.rewrite('b\n');
    await l.append('c\n');
    expect(await onDisk()).toEqual(['b', 'c']);
    expect(l.lines).toBe(2);
  });

  it('removes the temporary file of a rewrite that a power cut interrupted', async () => {
    await writeFile(file, 'a\n');
    await writeFile(`${file}.0123456789ab.tmp`, 'a\nb');
    expect((await loaded()).contents.lines).toEqual(['a']);
    expect(await readdir(dir)).toEqual(['records.log']);
  });

  it('writes a record that needs no flush in front of the next durable one, or at close', async () => {
    const { log: l } = await loaded();
    await l.append('a\n');
    await l.append('done-a\n', { durable: false });
    expect(await onDisk()).toEqual(['a']);
    await l.append('b\n');
    expect(await onDisk()).toEqual(['a', 'done-a', 'b']);
    await l.append('done-b\n', { durable: false });
    await l.close();
    expect(await onDisk()).toEqual(['a', 'done-a', 'b', 'done-b']);
  });

  it('drops records that need no flush when a rewrite replaces what they were about', async () => {
    const { log: l } = await loaded();
    await l.append('a\n');
    await l.append('done-a\n', { durable: false });
    await l.rewrite('');
    await l.close();
    expect(await readFile(file, 'utf8')).toBe('');
  });
});
