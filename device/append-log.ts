import { constants, fdatasyncSync, writeSync } from 'node:fs';
import { type FileHandle, open, readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDirectory, writeFileAtomic } from './files.js';

const NEWLINE = 0x0a;

/** What a log file held when it was read: its complete lines, in order. */
export interface LogContents {
  lines: string[];
  /** Whether the file ended in a partial line (an append that a power cut interrupted), now cut off. */
  torn: boolean;
}

/**
 * Records are written with O_DSYNC, so that a write returns once its data is on disk: one system call where
 * write plus fdatasync takes two. The write is synchronous on purpose: a command waits for its record before
 * anything else happens to it, and the hand-off to libuv's thread pool and back for the write and then the
 * fdatasync cost more than the flush (a record took 0.46 ms that way, 0.25 ms now, on a loaded 2-core
 * machine in `npm run bench -- open`). An SD card that takes longer holds up the controller's other outputs
 * for that long, no more. Where O_DSYNC does not exist, every write is followed by an fdatasync instead.
 */
const DSYNC = constants.O_DSYNC ?? 0;
const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | DSYNC;

type Job =
  | { kind: 'append'; text: string; durable: boolean; resolve: () => void; reject: (error: Error) => void }
  | { kind: 'rewrite'; text: string; resolve: () => void; reject: (error: Error) => void };

/**
 * A file of newline-terminated records, kept open for appending. The guarantees its users rely on:
 * - appends and rewrites run one at a time, in the order they were asked for, so records never interleave;
 * - `append(text)` resolves only once the record is on disk; appends asked for while the log is busy
 *   (opening its file, or rewriting it) go out together in one write (one disk flush for the group);
 * - `append(text, { durable: false })`, for a record whose loss costs nothing but repeated work, resolves at
 *   once and costs no write of its own: it goes out in front of the next durable record, or at `close()`;
 * - a partial last line left by a power cut is never glued to the next record: `load()` cuts it off, and an
 *   append to a file that was not loaded starts on a fresh line;
 * - `rewrite(text)` replaces the whole file atomically (the old or the new content survives a power cut),
 *   after every append asked for before it.
 * The records themselves must not contain a newline.
 */
export class AppendLog {
  readonly path: string;
  readonly #mode: number;
  #handle: FileHandle | null = null;
  /** Written before the next record when the file may end in a partial line. */
  #prefix = '';
  readonly #jobs: Job[] = [];
  #draining = false;
  #lines = 0;
  #bytes = 0;
  /** Records appended with `durable: false`, not written yet. */
  #deferred = '';

  constructor(path: string, options: { mode?: number } = {}) {
    this.path = path;
    this.#mode = options.mode ?? 0o600;
  }

  /** Lines in the file once every pending job has run, counting records that are still being written. */
  get lines(): number {
    return this.#lines;
  }

  /** Size of the file once every pending job has run (in bytes). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Reads the complete lines (empty when the file does not exist) and opens the file for appending. A partial
   * last line is cut off the file, so that the next record starts on a line of its own.
   */
  async load(): Promise<LogContents> {
    await this.close();
    // A rewrite that a power cut interrupted before its rename leaves its temporary file: never complete.
    const prefix = `${basename(this.path)}.`;
    for (const name of await readdir(dirname(this.path))) {
      if (name.startsWith(prefix) && name.endsWith('.tmp'))
        await rm(join(dirname(this.path), name), { force: true });
    }
    let data: Buffer;
    try {
      data = await readFile(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      data = Buffer.alloc(0);
    }
    const end = data.lastIndexOf(NEWLINE) + 1;
    const text = data.subarray(0, end).toString('utf8');
    const lines = text === '' ? [] : text.slice(0, -1).split('\n');
    const handle = await this.#open();
    const torn = end < data.length;
    if (torn) {
      await handle.truncate(end);
      await handle.datasync();
    }
    this.#prefix = '';
    this.#deferred = '';
    this.#lines = lines.length;
    this.#bytes = end;
    return { lines, torn };
  }

  /**
   * Appends `text` (one or more records, each ending in a newline); resolves once it is on disk, or with
   * `durable: false` once it is queued for the next write.
   */
  append(text: string, options: { durable?: boolean } = {}): Promise<void> {
    this.#lines += countNewlines(text);
    this.#bytes += Buffer.byteLength(text);
    return this.#enqueue({ kind: 'append', text, durable: options.durable ?? true });
  }

  /** Replaces the file's content atomically, after the appends already asked for. */
  rewrite(text: string): Promise<void> {
    this.#lines = countNewlines(text);
    this.#bytes = Buffer.byteLength(text);
    return this.#enqueue({ kind: 'rewrite', text });
  }

  /** Waits for the jobs asked for so far, then closes the file. Appending afterwards opens it again. */
  async close(): Promise<void> {
    await this.#enqueue({ kind: 'append', text: '', durable: true }).catch(() => undefined);
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close();
  }

  #enqueue(job: { kind: 'append'; text: string; durable: boolean } | { kind: 'rewrite'; text: string }) {
    return new Promise<void>((resolve, reject) => {
      this.#jobs.push({ ...job, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        void this.#drain();
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#jobs.length > 0) {
      const first = this.#jobs[0]!;
      if (first.kind === 'rewrite') {
        this.#jobs.shift();
        // The new content replaces what the deferred records were about to add.
        this.#deferred = '';
        await this.#rewrite(first.text).then(first.resolve, first.reject);
        continue;
      }
      // Every append waiting now goes out in one durable write, behind the deferred ones.
      const group: Extract<Job, { kind: 'append' }>[] = [];
      while (this.#jobs[0]?.kind === 'append') group.push(this.#jobs.shift() as (typeof group)[number]);
      const text = this.#deferred + group.map((job) => job.text).join('');
      if (!group.some((job) => job.durable)) {
        this.#deferred = text;
        for (const job of group) job.resolve();
        continue;
      }
      this.#deferred = '';
      try {
        if (text !== '') {
          const handle = await this.#appendHandle();
          writeDurably(handle.fd, this.#prefix + text);
          this.#prefix = '';
        }
        for (const job of group) job.resolve();
      } catch (error) {
        // The file may now end in part of this write: reopen it before the next one, on a fresh line.
        const handle = this.#handle;
        this.#handle = null;
        await handle?.close().catch(() => undefined);
        for (const job of group) job.reject(error as Error);
      }
    }
    this.#draining = false;
  }

  async #rewrite(text: string): Promise<void> {
    try {
      await writeFileAtomic(this.path, text, { mode: this.#mode });
    } finally {
      // The handle may now point at the replaced file (even if only the folder sync failed): the next append
      // opens the file by its name again.
      const handle = this.#handle;
      this.#handle = null;
      await handle?.close().catch(() => undefined);
    }
  }

  /** The open handle; opened on first use, starting a fresh line if the file ends in a partial one. */
  async #appendHandle(): Promise<FileHandle> {
    if (this.#handle) return this.#handle;
    const handle = await this.#open();
    const { size } = await handle.stat();
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      if (last[0] !== NEWLINE) {
        this.#prefix = '\n';
        this.#lines++;
      }
    }
    return handle;
  }

  /** Opens the file for reading and appending; a file it creates is made durable with its folder. */
  async #open(): Promise<FileHandle> {
    let handle: FileHandle;
    let created = true;
    try {
      handle = await open(this.path, APPEND_FLAGS | constants.O_EXCL, this.#mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      handle = await open(this.path, APPEND_FLAGS, this.#mode);
      created = false;
    }
    if (created) {
      try {
        await syncDirectory(dirname(this.path));
      } catch (error) {
        await handle.close();
        throw error;
      }
    }
    this.#handle = handle;
    return handle;
  }
}

function writeDurably(fd: number, text: string): void {
  const data = Buffer.from(text);
  let offset = 0;
  // With O_APPEND every write goes to the end of the file, whatever position is given.
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
  if (DSYNC === 0) fdatasyncSync(fd);
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}
