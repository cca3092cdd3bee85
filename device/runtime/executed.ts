import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../files.js';

export interface ExecutedStoreOptions {
  /** The JSON file that holds the ids, e.g. <state_dir>/executed.json. */
  file: string;
  now: () => number;
  /**
   * How long an id is kept after its command's `expires_at`. Once a command has expired it is refused as
   * `expired` anyway; the margin covers clock corrections, so a replay is always refused by one of the two.
   */
  retentionMs?: number;
  /** Upper bound on remembered ids; the ones that expire first are forgotten first. */
  maxEntries?: number;
}

/**
 * The ids of commands this controller has executed, on disk, so that a command delivered twice (QoS 1) or
 * replayed is refused as `duplicate`, across restarts too. An id is recorded before the driver acts.
 */
export class ExecutedStore {
  readonly #options: Required<ExecutedStoreOptions>;
  /** id -> time until which it is kept (Unix ms). */
  #entries = new Map<string, number>();
  #writing: Promise<void> = Promise.resolve();

  constructor(options: ExecutedStoreOptions) {
    this.#options = { retentionMs: 60 * 60_000, maxEntries: 10_000, ...options };
  }

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.#options.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${this.#options.file} is not valid JSON; move it aside to start afresh`);
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [id, until] of Object.entries(parsed)) {
        if (typeof until === 'number') this.#entries.set(id, until);
      }
    }
    this.#prune();
  }

  has(id: string): boolean {
    const until = this.#entries.get(id);
    return until !== undefined && until >= this.#options.now();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Records an id and resolves once the file on disk holds it. */
  async add(id: string, expiresAt: number): Promise<void> {
    this.#entries.set(id, Math.max(expiresAt, this.#options.now()) + this.#options.retentionMs);
    this.#prune();
    const snapshot = JSON.stringify(Object.fromEntries(this.#entries));
    const write = this.#writing.then(() => writeFileAtomic(this.#options.file, snapshot, { mode: 0o600 }));
    this.#writing = write.catch(() => undefined);
    await write;
  }

  #prune(): void {
    const now = this.#options.now();
    for (const [id, until] of this.#entries) if (until < now) this.#entries.delete(id);
    if (this.#entries.size > this.#options.maxEntries) {
      const sorted = [...this.#entries].sort((a, b) => a[1] - b[1]);
      for (const [id] of sorted.slice(0, this.#entries.size - this.#options.maxEntries))
        this.#entries.delete(id);
    }
  }
}
