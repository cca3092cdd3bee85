import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ACK_REASONS } from '../../shared/protocol/messages.js';
import { POSITIONS } from '../../shared/protocol/positions.js';
import { writeFileAtomic } from '../files.js';

/**
 * `<state_dir>/status.json`: what the running daemon last knew, for `gatelink-device status`. Written atomically
 * on every change (at most every `minIntervalMs`), and once more with `running: false` when the daemon stops.
 */
export const STATUS_FILE = 'status.json';

export const statusSchema = z.object({
  v: z.literal(1),
  running: z.boolean(),
  pid: z.number().int(),
  device_id: z.string(),
  version: z.string(),
  started_at: z.number(),
  updated_at: z.number(),
  mqtt: z.object({
    url: z.string(),
    connected: z.boolean(),
    since: z.number().nullable(),
    /** Why the last attempt to connect failed, in one line (a certificate that does not verify names its host). */
    last_error: z.string().nullable().default(null),
  }),
  clock_synced: z.boolean(),
  signal: z.number().int().nullable(),
  modem: z.string().nullable(),
  outbox: z.number().int(),
  /**
   * Each position sensor's gate (docs/design.md section 12.5); `since` is when it took that position, null
   * until the clock is trusted. Absent in the files of versions before sensors.
   */
  sensors: z
    .array(
      z.object({
        object: z.string(),
        position: z.enum(POSITIONS),
        since: z.number().nullable(),
      }),
    )
    .default([]),
  last_command: z
    .object({
      id: z.string(),
      object: z.string(),
      outcome: z.enum(['opened', 'refused', 'failed']),
      reason: z.enum(ACK_REASONS).optional(),
      received_at: z.number(),
      finished_at: z.number(),
    })
    .nullable(),
});
export type DaemonStatus = z.infer<typeof statusSchema>;

export function statusPath(stateDir: string): string {
  return join(stateDir, STATUS_FILE);
}

/** Reads the status file; null when there is none (the daemon never ran with this state folder). */
export async function readStatus(stateDir: string): Promise<DaemonStatus | null> {
  let text: string;
  try {
    text = await readFile(statusPath(stateDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return statusSchema.parse(JSON.parse(text));
}

export class StatusFile {
  readonly #path: string;
  readonly #now: () => number;
  readonly #minIntervalMs: number;
  #status: DaemonStatus;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #writing: Promise<void> = Promise.resolve();
  #lastWrite = 0;

  constructor(options: {
    stateDir: string;
    initial: DaemonStatus;
    now: () => number;
    minIntervalMs?: number;
  }) {
    this.#path = statusPath(options.stateDir);
    this.#now = options.now;
    this.#status = options.initial;
    this.#minIntervalMs = options.minIntervalMs ?? 250;
  }

  get current(): DaemonStatus {
    return this.#status;
  }

  update(patch: Partial<DaemonStatus>): void {
    this.#status = { ...this.#status, ...patch };
    if (this.#timer) return;
    const wait = Math.max(0, this.#lastWrite + this.#minIntervalMs - this.#now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.write();
    }, wait);
    this.#timer.unref?.();
  }

  /** Writes the current status now; resolves once it is on disk. */
  write(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#lastWrite = this.#now();
    const text = `${JSON.stringify({ ...this.#status, updated_at: this.#now() }, null, 2)}\n`;
    const next = this.#writing.then(() => writeFileAtomic(this.#path, text));
    this.#writing = next.catch(() => undefined);
    return next;
  }
}
