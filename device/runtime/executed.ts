import { readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AppendLog } from '../append-log.js';
import { syncDirectory } from '../files.js';

export interface ExecutedStoreOptions {
  /** The log that holds the ids, e.g. <state_dir>/executed.log. */
  file: string;
  /**
   * The JSON file of the previous versions (`{ "<id>": <keep-until-ms> }`, e.g. <state_dir>/executed.json):
   * read once by `load()`, moved into the log, then removed.
   */
  legacyFile?: string;
  now: () => number;
  /**
   * How long an id is kept after its command's `expires_at`. Once a command has expired it is refused as
   * `expired` anyway; the margin covers clock corrections, so a replay is always refused by one of the two.
   */
  retentionMs?: number;
  /** Upper bound on remembered ids; the ones that expire first are forgotten first. */
  maxEntries?: number;
}

/** Lines a log may hold beyond twice the live ids before it is rewritten with the live ones only. */
const COMPACT_SLACK = 256;
/** Expired ids are dropped from memory at most this often (`has` checks the time anyway). */
const PRUNE_INTERVAL_MS = 1000;

/**
 * The ids of commands this controller has executed, on disk, so that a command delivered twice (QoS 1) or
 * replayed is refused as `duplicate`, across restarts too. An id is recorded before the driver acts.
 *
 * On disk: a log with one line per recorded id, `<id> <keep-until-ms>\n`, appended durably by `add`.
 * `load` keeps the unexpired ids, ignores a line that is not complete or not parsable (a power cut
 * mid-append, whose `add` never resolved), and rewrites the log atomically once it holds many more lines than
 * live ids; `add` does the same, rarely.
 */
export class ExecutedStore {
  readonly #options: Required<Omit<ExecutedStoreOptions, 'legacyFile'>> & { legacyFile?: string };
  readonly #log: AppendLog;
  /** id -> time until which it is kept (Unix ms). */
  #entries = new Map<string, number>();
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: ExecutedStoreOptions) {
    this.#options = { retentionMs: 60 * 60_000, maxEntries: 10_000, ...options };
    this.#log = new AppendLog(options.file, { mode: 0o600 });
  }

  async load(): Promise<void> {
    const { lines } = await this.#log.load();
    for (const line of lines) {
      const entry = parseLine(line);
      if (entry) this.#entries.set(entry[0], Math.max(entry[1], this.#entries.get(entry[0]) ?? 0));
    }
    const legacy = await this.#readLegacy();
    for (const [id, until] of legacy ?? [])
      this.#entries.set(id, Math.max(until, this.#entries.get(id) ?? 0));
    this.#prune(true);
    if (legacy || this.#needsCompaction()) await this.#compact();
    if (legacy && this.#options.legacyFile) {
      // Only once the log holds its ids: a power cut before this line reads both files again.
      await rm(this.#options.legacyFile, { force: true });
      await syncDirectory(dirname(this.#options.legacyFile));
    }
  }

  /** Closes the log once the records asked for are written. */
  async close(): Promise<void> {
    await this.#log.close();
  }

  has(id: string): boolean {
    const until = this.#entries.get(id);
    return until !== undefined && until >= this.#options.now();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Records an id and resolves once the log on disk holds it. */
  async add(id: string, expiresAt: number): Promise<void> {
    if (!/^\S+$/.test(id)) throw new Error(`cannot record the command id ${JSON.stringify(id)}`);
    const until = Math.max(expiresAt, this.#options.now()) + this.#options.retentionMs;
    this.#entries.set(id, until);
    this.#prune(false);
    const written = this.#log.append(`${id} ${until}\n`);
    // Queued behind this record, so this add does not wait for it; the next one may, about once per
    // (live ids + COMPACT_SLACK) adds.
    if (this.#needsCompaction()) this.#compact().catch(() => undefined);
    await written;
  }

  #needsCompaction(): boolean {
    return this.#log.lines > 2 * this.#entries.size + COMPACT_SLACK;
  }

  /** Rewrites the log with the live ids, after every record asked for so far (which it includes). */
  #compact(): Promise<void> {
    this.#prune(true);
    let text = '';
    for (const [id, until] of this.#entries) text += `${id} ${until}\n`;
    return this.#log.rewrite(text);
  }

  /** The ids in the file of the previous versions, or null when there is none. */
  async #readLegacy(): Promise<[string, number][] | null> {
    const file = this.#options.legacyFile;
    if (!file) return null;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${file} is not valid JSON; move it aside to start afresh`);
    }
    const entries: [string, number][] = [];
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [id, until] of Object.entries(parsed)) {
        if (typeof until === 'number' && /^\S+$/.test(id)) entries.push([id, until]);
      }
    }
    return entries;
  }

  #prune(always: boolean): void {
    const now = this.#options.now();
    if (always || now - this.#prunedAt >= PRUNE_INTERVAL_MS) {
      this.#prunedAt = now;
      for (const [id, until] of this.#entries) if (until < now) this.#entries.delete(id);
    }
    if (this.#entries.size > this.#options.maxEntries) {
      const sorted = [...this.#entries].sort((a, b) => a[1] - b[1]);
      for (const [id] of sorted.slice(0, this.#entries.size - this.#options.maxEntries))
        this.#entries.delete(id);
    }
  }
}

/** `<id> <keep-until-ms>`, or null for a line that is not one. */
function parseLine(line: string): [string, number] | null {
  const match = /^(\S+) (\d{1,16})$/.exec(line);
  return match ? [match[1]!, Number(match[2])] : null;
}
