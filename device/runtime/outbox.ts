import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Ack, ackSchema } from '../../shared/protocol/messages.js';
import {
  bundlePayload,
  MAX_BUNDLED_REPORTS,
  type PositionReport,
  positionReportSchema,
} from '../../shared/protocol/positions.js';
import { AppendLog } from '../append-log.js';
import { syncDirectory } from '../files.js';

/** What the outbox needs from the MQTT session. */
export interface Publisher {
  readonly connected: boolean;
  /** Resolves once the broker acknowledged the message (PUBACK for QoS 1); rejects if it cannot be sent. */
  publish(topic: string, payload: string, options: { qos: 0 | 1; retain?: boolean }): Promise<void>;
}

export interface OutboxOptions {
  dir: string;
  /** The controller's id, named by a message that carries several reports. */
  deviceId: string;
  /** The device's `ack` topic. */
  topic: string;
  publisher: Publisher;
  now: () => number;
  log?: (line: string) => void;
  onSize?: (size: number) => void;
  /**
   * How long a report waits for others to travel with it in one message (ms, default REPORT_LINGER_MS; 0 sends
   * each at once, alone). Acknowledgements never wait.
   */
  reportLingerMs?: number;
  /** Replaces setTimeout and clearTimeout for the reports' linger (tests). */
  timers?: { set(run: () => void, ms: number): unknown; clear(timer: unknown): void };
  /** When the log is rewritten (bytes); the defaults suit a controller, tests make them small. */
  compaction?: {
    /** Once everything is sent, a log larger than this is emptied (default 64 KiB). */
    emptyAbove?: number;
    /**
     * A log larger than this, with more than twice as many lines as acknowledgements waiting, is rewritten
     * with those only (default 1 MiB).
     */
    rewriteAbove?: number;
  };
}

/** The log in the outbox folder. */
export const OUTBOX_LOG = 'outbox.log';

/** How long a lazy record (a position report) may wait for a durable write to take it to the disk. */
export const LAZY_FLUSH_MS = 1000;

/**
 * How long a position report waits in the outbox for others (docs/design.md section 12.5): reports made within
 * it travel in one message, so that a burst of changes costs the broker and the cloud one message, not one each.
 * A gate's position reaching the cloud a tenth of a second later is unseen.
 */
export const REPORT_LINGER_MS = 100;

const REAL_TIMERS = {
  set: (run: () => void, ms: number) => setTimeout(run, ms),
  clear: (timer: unknown) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/** What travels on the device's `ack` topic: acknowledgements and position reports (docs/design.md 7.5). */
export type OutboxMessage = Ack | PositionReport;

/** The key a message is confirmed by: an acknowledgement's command id, a report's own id. */
export function outboxKey(message: OutboxMessage): string {
  return 'type' in message ? message.id : message.command_id;
}

interface Entry {
  key: string;
  /** The signed message, exactly as sent. */
  payload: string;
  /** Set once its record is on disk; only then may it be sent. */
  durable: boolean;
  /** Set while a publish of it waits for the broker's answer. */
  sending?: boolean;
  /** A file of a previous version's outbox, removed once sent (instead of a `D` record). */
  legacyFile?: string;
  /** A position report: it may wait for others and travel with them (REPORT_LINGER_MS). */
  report?: boolean;
}

/**
 * Signed acknowledgements and position reports on their way to the cloud (docs/design.md sections 7 and 12.5),
 * in one queue so that a report never overtakes the acknowledgement of the opening that moved the gate. Each is on disk
 * before any attempt to send it, sent at QoS 1 in the order written, and forgotten only once the broker
 * acknowledged the publish. Whatever is left is sent again after a reconnect or a restart; the cloud applies an
 * acknowledgement once, by command id, and a report once, by its `changed_at`, so a second copy does no harm. An acknowledgement does not wait for
 * the broker's answer to the one before: the cloud's broker answers only once the journal holds it.
 *
 * On disk: `<dir>/outbox.log`, one record a line: `P <JSON>` when a message is put, and `D <key>` once the
 * broker has it (the key is an acknowledgement's command id or a report's id; logs of versions before reports
 * hold acknowledgements only and read the same). A `D` has no flush of its own: it reaches the disk in front of the
 * next `P`, or when the outbox stops, so an opening costs one durable write; should a `D` be lost to a power
 * cut, the acknowledgement is only sent again, and the cloud applies it once. A `D`
 * cancels the oldest `P` for the same key that is still waiting: acknowledgements are confirmed in the
 * order they were written, and two may share a command id (the outcome, then a `duplicate` refusal).
 */
export class Outbox {
  readonly #options: OutboxOptions;
  readonly #log: AppendLog;
  /** Put and not yet confirmed, in the order written. */
  #entries: Entry[] = [];
  /** Sends waiting for the broker's answer; each settles once the entry is forgotten or back to waiting. */
  readonly #inFlight = new Set<Promise<void>>();
  #stopped = false;
  /** The timer that writes lazy records out if no durable one takes them first. */
  #lazyFlush: ReturnType<typeof setTimeout> | null = null;
  /** The timer at the end of which the reports waiting are sent. */
  #linger: unknown = null;

  constructor(options: OutboxOptions) {
    this.#options = options;
    this.#log = new AppendLog(join(options.dir, OUTBOX_LOG), { mode: 0o600 });
  }

  /** Messages on disk and not yet confirmed by the broker. */
  get size(): number {
    let size = 0;
    for (const entry of this.#entries) if (entry.durable) size++;
    return size;
  }

  /** Loads what a previous run left behind and sends it once connected. */
  async start(): Promise<void> {
    this.#stopped = false;
    await mkdir(this.#options.dir, { recursive: true, mode: 0o700 });
    const legacy = await this.#loadLegacy();
    const { lines, torn } = await this.#log.load();
    if (torn) this.#options.log?.('outbox: ignored a partly written last record');
    const { entries, skipped } = replay(lines);
    if (skipped > 0) this.#options.log?.(`outbox: ignored ${skipped} unreadable record(s)`);
    // A previous version's acknowledgements are older than anything in the log.
    this.#entries = [...legacy, ...entries.map((entry) => ({ ...entry, durable: true }))];
    await this.#compactIfNeeded();
    this.#options.onSize?.(this.size);
    void this.flush();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#lazyFlush) clearTimeout(this.#lazyFlush);
    this.#lazyFlush = null;
    this.#cancelLinger();
    await this.#settled();
    await this.#log.close();
  }

  /**
   * Persists the message durably, then tries to send it. Resolves once it is on disk. With `lazy` (position
   * reports, docs/design.md section 12.5) the record costs no write of its own: it reaches the disk with the
   * next acknowledgement's, or within LAZY_FLUSH_MS, and is sent at once meanwhile. A power cut in that window
   * loses at most that report, which the next connect's report of the current position makes up for; an
   * opening never waits behind it.
   */
  async put(message: OutboxMessage, options: { lazy?: boolean } = {}): Promise<void> {
    const entry: Entry = {
      key: outboxKey(message),
      payload: JSON.stringify(message),
      durable: false,
      report: 'type' in message,
    };
    // In the list before the record is written, so that a compaction asked for meanwhile keeps it.
    this.#entries.push(entry);
    try {
      await this.#log.append(`P ${entry.payload}\n`, { durable: !options.lazy });
      if (options.lazy) this.#flushSoon();
    } catch (error) {
      this.#entries = this.#entries.filter((candidate) => candidate !== entry);
      throw error;
    }
    entry.durable = true;
    this.#options.onSize?.(this.size);
    void this.flush();
  }

  /**
   * Sends everything waiting that is not on its way yet, oldest first, each without waiting for the answer to
   * the one before: one connection delivers them in the order sent. Reports wait REPORT_LINGER_MS for others
   * and then travel together (`sendReports`); an acknowledgement never waits for them, so one may overtake a
   * report written before it, never the other way round. A send fails when the connection drops, and with it
   * every one after it; the next call (after reconnecting) sends them again. Resolves once every send started
   * so far is answered or failed.
   */
  flush(): Promise<void> {
    const lingerMs = this.#options.reportLingerMs ?? REPORT_LINGER_MS;
    for (const entry of this.#entries) {
      // One not yet on disk is sent by the flush its `put` starts once it is.
      if (!entry.durable || this.#stopped || !this.#options.publisher.connected) break;
      if (entry.sending) continue;
      if (entry.report && lingerMs > 0) this.#lingerReports(lingerMs);
      else if (entry.report) this.#sendReports();
      else this.#send([entry], entry.payload);
    }
    return this.#settled();
  }

  #lingerReports(lingerMs: number): void {
    if (this.#linger !== null) return;
    const timers = this.#options.timers ?? REAL_TIMERS;
    this.#linger = timers.set(() => {
      this.#linger = null;
      this.#sendReports();
    }, lingerMs);
  }

  #cancelLinger(): void {
    if (this.#linger === null) return;
    (this.#options.timers ?? REAL_TIMERS).clear(this.#linger);
    this.#linger = null;
  }

  /**
   * Sends the reports waiting, in the order written, up to MAX_BUNDLED_REPORTS in each message: a lone report as
   * it is, several as one `positions` message (shared/protocol/positions.ts) made of their signed texts. Only
   * those ahead of the first acknowledgement not sent yet: a report never goes ahead of one written before it.
   */
  #sendReports(): void {
    this.#cancelLinger();
    const waiting: Entry[] = [];
    for (const entry of this.#entries) {
      if (!entry.durable || this.#stopped || !this.#options.publisher.connected) break;
      if (entry.sending) continue;
      if (!entry.report) break;
      waiting.push(entry);
    }
    for (let i = 0; i < waiting.length; i += MAX_BUNDLED_REPORTS) {
      const group = waiting.slice(i, i + MAX_BUNDLED_REPORTS);
      const payload =
        group.length === 1
          ? group[0]!.payload
          : bundlePayload(
              this.#options.deviceId,
              group.map((entry) => entry.payload),
            );
      this.#send(group, payload);
    }
  }

  #flushSoon(): void {
    if (this.#lazyFlush) return;
    this.#lazyFlush = setTimeout(() => {
      this.#lazyFlush = null;
      this.#log
        .append('', { durable: true })
        .catch((error: Error) => this.#options.log?.(`outbox: cannot write reports: ${error.message}`));
    }, LAZY_FLUSH_MS);
    this.#lazyFlush.unref?.();
  }

  /** Publishes `payload`, which carries `entries`; each is forgotten once the broker has it. */
  #send(entries: Entry[], payload: string): void {
    for (const entry of entries) entry.sending = true;
    const sent = this.#options.publisher.publish(this.#options.topic, payload, { qos: 1 }).then(
      async () => {
        for (const entry of entries) await this.#forget(entry);
      },
      (error: Error) => {
        for (const entry of entries) entry.sending = false;
        const what = entries.length === 1 ? entries[0]!.key : `${entries.length} reports`;
        this.#options.log?.(`outbox: ${what} not sent yet: ${error.message}`);
      },
    );
    this.#inFlight.add(sent);
    void sent.then(() => this.#inFlight.delete(sent));
  }

  async #settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  async #forget(entry: Entry): Promise<void> {
    this.#entries = this.#entries.filter((candidate) => candidate !== entry);
    this.#options.onSize?.(this.size);
    try {
      if (entry.legacyFile) {
        await rm(entry.legacyFile, { force: true });
        await syncDirectory(this.#options.dir);
      } else {
        await this.#log.append(`D ${entry.key}\n`, { durable: false });
      }
      await this.#compactIfNeeded();
    } catch (error) {
      // At worst the acknowledgement is sent again after a restart.
      this.#options.log?.(`outbox: could not record ${entry.key} as sent: ${(error as Error).message}`);
    }
  }

  /**
   * Empties the log once nothing in it waits (when it has grown), or rewrites it with the waiting records when
   * it is large and mostly done. Asked for after the records so far, so the rewrite reflects all of them.
   */
  async #compactIfNeeded(): Promise<void> {
    const { emptyAbove = 64 * 1024, rewriteAbove = 1024 * 1024 } = this.#options.compaction ?? {};
    const waiting = this.#entries.filter((entry) => !entry.legacyFile);
    const { bytes, lines } = this.#log;
    if (waiting.length === 0 ? bytes > emptyAbove : bytes > rewriteAbove && lines > 2 * waiting.length) {
      await this.#log.rewrite(waiting.map((entry) => `P ${entry.payload}\n`).join(''));
    }
  }

  /** The acknowledgements a previous version left as one file each, oldest first. */
  async #loadLegacy(): Promise<Entry[]> {
    const names = await readdir(this.#options.dir);
    // Leftover temporary files are writes that a power cut interrupted before the rename: never complete.
    for (const name of names.filter((n) => n.endsWith('.tmp')))
      await rm(join(this.#options.dir, name), { force: true });
    const entries: Entry[] = [];
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const path = join(this.#options.dir, name);
      try {
        const payload = await readFile(path, 'utf8');
        const ack = ackSchema.parse(JSON.parse(payload));
        entries.push({ key: ack.command_id, payload, durable: true, legacyFile: path });
      } catch (error) {
        this.#options.log?.(`outbox: dropping unreadable ${name}: ${(error as Error).message}`);
        await rm(path, { force: true });
      }
    }
    return entries;
  }
}

/**
 * The messages still waiting according to the log's lines: every `P` without a later `D` for the same key, in
 * the order written. Lines that are not records (a power cut can leave garbage after the last
 * synced one) are counted and ignored.
 */
export function replay(lines: readonly string[]): {
  entries: { key: string; payload: string; report: boolean }[];
  skipped: number;
} {
  const entries: ({ key: string; payload: string; report: boolean } | null)[] = [];
  /** key -> indexes in `entries` still waiting, oldest first. */
  const waiting = new Map<string, number[]>();
  let skipped = 0;
  for (const line of lines) {
    if (line === '') continue;
    if (line.startsWith('P ')) {
      const payload = line.slice(2);
      const parsed = parseMessage(payload);
      if (!parsed) {
        skipped++;
        continue;
      }
      const key = outboxKey(parsed);
      const indexes = waiting.get(key) ?? [];
      indexes.push(entries.length);
      waiting.set(key, indexes);
      entries.push({ key, payload, report: 'type' in parsed });
    } else if (line.startsWith('D ')) {
      const index = waiting.get(line.slice(2))?.shift();
      if (index !== undefined) entries[index] = null;
    } else {
      skipped++;
    }
  }
  return { entries: entries.filter((entry) => entry !== null), skipped };
}

function parseMessage(payload: string): OutboxMessage | null {
  try {
    const raw: unknown = JSON.parse(payload);
    const isReport =
      raw !== null && typeof raw === 'object' && (raw as { type?: unknown }).type === 'position';
    const result = (isReport ? positionReportSchema : ackSchema).safeParse(raw);
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

/**
 * How many messages (acknowledgements and reports) wait in an outbox folder, read from disk (for `gatelink-device status`, which may
 * run while the daemon does not).
 */
export async function countWaiting(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const legacy = names.filter((name) => name.endsWith('.json')).length;
  let text = '';
  if (names.includes(OUTBOX_LOG)) text = await readFile(join(dir, OUTBOX_LOG), 'utf8').catch(() => '');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  const lines = complete === '' ? [] : complete.slice(0, -1).split('\n');
  return legacy + replay(lines).entries.length;
}
