import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Ack, ackSchema } from '../../shared/protocol/messages.js';
import { syncDirectory, writeFileAtomic } from '../files.js';

/** What the outbox needs from the MQTT session. */
export interface Publisher {
  readonly connected: boolean;
  /** Resolves once the broker acknowledged the message (PUBACK for QoS 1); rejects if it cannot be sent. */
  publish(topic: string, payload: string, options: { qos: 0 | 1; retain?: boolean }): Promise<void>;
}

export interface OutboxOptions {
  dir: string;
  /** The device's `ack` topic. */
  topic: string;
  publisher: Publisher;
  now: () => number;
  log?: (line: string) => void;
  onSize?: (size: number) => void;
}

/**
 * Signed acknowledgements on their way to the cloud (decisions.md section 7). Each is written to its own file
 * and fsynced before any attempt to send it, sent at QoS 1 in the order written, and removed only once the
 * broker acknowledged the publish. Whatever is left is sent again after a reconnect or a restart; the cloud
 * applies an acknowledgement once, by command id, so a second copy does no harm.
 */
export class Outbox {
  readonly #options: OutboxOptions;
  #files: string[] = [];
  #sequence = 0;
  #flushing: Promise<void> | null = null;
  #again = false;
  #stopped = false;

  constructor(options: OutboxOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#files.length;
  }

  /** Loads what a previous run left behind and sends it once connected. */
  async start(): Promise<void> {
    this.#stopped = false;
    await mkdir(this.#options.dir, { recursive: true, mode: 0o700 });
    const names = await readdir(this.#options.dir);
    // Leftover temporary files are writes that a power cut interrupted before the rename: never complete.
    for (const name of names.filter((n) => n.endsWith('.tmp')))
      await rm(join(this.#options.dir, name), { force: true });
    this.#files = names.filter((n) => n.endsWith('.json')).sort();
    this.#options.onSize?.(this.size);
    void this.flush();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#flushing;
  }

  /** Persists the acknowledgement durably, then tries to send it. Resolves once it is on disk. */
  async put(ack: Ack): Promise<void> {
    const name = `${String(this.#options.now()).padStart(15, '0')}-${String(this.#sequence++).padStart(6, '0')}-${ack.command_id}.json`;
    await writeFileAtomic(join(this.#options.dir, name), JSON.stringify(ack), { mode: 0o600 });
    this.#files.push(name);
    this.#files.sort();
    this.#options.onSize?.(this.size);
    void this.flush();
  }

  /** Sends everything waiting, oldest first; stops at the first failure and waits for the next call. */
  flush(): Promise<void> {
    if (this.#flushing) {
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = (async () => {
      do {
        this.#again = false;
        await this.#sendAll();
      } while (this.#again && this.#options.publisher.connected && !this.#stopped);
    })().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #sendAll(): Promise<void> {
    for (const name of [...this.#files]) {
      if (this.#stopped || !this.#options.publisher.connected) return;
      const path = join(this.#options.dir, name);
      let payload: string;
      try {
        payload = await readFile(path, 'utf8');
        ackSchema.parse(JSON.parse(payload));
      } catch (error) {
        this.#options.log?.(`outbox: dropping unreadable ${name}: ${(error as Error).message}`);
        await this.#remove(name);
        continue;
      }
      try {
        await this.#options.publisher.publish(this.#options.topic, payload, { qos: 1 });
      } catch (error) {
        this.#options.log?.(`outbox: ${name} not sent yet: ${(error as Error).message}`);
        return;
      }
      await this.#remove(name);
    }
  }

  async #remove(name: string): Promise<void> {
    await rm(join(this.#options.dir, name), { force: true });
    await syncDirectory(this.#options.dir).catch(() => undefined);
    this.#files = this.#files.filter((n) => n !== name);
    this.#options.onSize?.(this.size);
  }
}
