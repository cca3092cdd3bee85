import { PassThrough, type Readable } from 'node:stream';
import { ApiError } from '../../../shared/errors.js';
import type { Part } from '../../../shared/lifecycle/lifecycle.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DatabaseHandle } from '../../foundation/db/database.js';
import { EVENTS_WAKE_CHANNEL } from '../../rules/events/events-wake.js';
import { companySigningKeys } from '../../rules/events/signing-secrets.js';
import { webhookBody, webhookHeaders } from '../../rules/events/webhook-message.js';

/**
 * `listen` (docs/design.md section 6.1): a company's events streamed as Server-Sent Events while the connection
 * lasts, each as the very delivery its callback address gets, signed now, so that `gatelink-company listen` can
 * forward it to a local receiver that verifies it as a real one.
 *
 * A stream is a cursor on `events.seq`, not a queue: it starts at the company's newest event, and on every
 * commit that wrote events (the `gatelink_events` notification the delivery worker wakes on), and every
 * `pollMs` in case a notification was lost, it reads what came after, `batch` at a time. It writes the next
 * batch only once the client took the last one, so a client that reads slowly falls behind without the cloud
 * keeping anything for it: memory per stream is one batch. A comment line every `heartbeatMs` keeps proxies from
 * closing a quiet stream. At most `perCompany` streams per company and `total` in all.
 */
export interface EventStreamOptions {
  perCompany: number;
  total: number;
  heartbeatMs: number;
  pollMs: number;
  batch: number;
}

export const DEFAULT_EVENT_STREAMS: EventStreamOptions = {
  perCompany: 4,
  total: 256,
  heartbeatMs: 25_000,
  pollMs: 5_000,
  batch: 50,
};

export class EventStreams implements Part {
  readonly name = 'event streams';
  readonly #ctx: Pick<CloudContext, 'db' | 'clock' | 'serviceKey' | 'log'>;
  readonly #database: DatabaseHandle;
  readonly #options: EventStreamOptions;
  readonly #open = new Set<CompanyStream>();
  #unlisten: (() => Promise<void>) | null = null;
  #poll: NodeJS.Timeout | null = null;

  constructor(options: {
    ctx: Pick<CloudContext, 'db' | 'clock' | 'serviceKey' | 'log'>;
    database: DatabaseHandle;
    options?: Partial<EventStreamOptions>;
  }) {
    this.#ctx = options.ctx;
    this.#database = options.database;
    this.#options = { ...DEFAULT_EVENT_STREAMS, ...options.options };
  }

  async start(): Promise<void> {
    if (this.#database.listen) {
      this.#unlisten = await this.#database.listen(EVENTS_WAKE_CHANNEL, () => this.#wakeAll());
    }
    this.#poll = setInterval(() => this.#wakeAll(), this.#options.pollMs);
    this.#poll.unref();
  }

  /** Ends every stream, so that a closing server is not held open by them. */
  closeAll(): void {
    for (const stream of this.#open) stream.close();
  }

  async stop(): Promise<void> {
    this.closeAll();
    if (this.#poll) clearInterval(this.#poll);
    await this.#unlisten?.().catch(() => {});
  }

  /** How many streams are open now, for the company or in all. */
  count(companyId?: number): number {
    if (companyId === undefined) return this.#open.size;
    return [...this.#open].filter((stream) => stream.companyId === companyId).length;
  }

  /**
   * A stream of the company's events from now on, as `text/event-stream` text; a sandbox's (`sandbox`, docs/design.md
   * section 11.9) each say so in their body.
   */
  async open(companyId: number, options: { sandbox?: boolean } = {}): Promise<Readable> {
    this.#checkRoom(companyId);
    const newest = await this.#ctx.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    // Again, with no wait before the stream counts: others may have opened while the cursor was read.
    this.#checkRoom(companyId);
    const stream = new CompanyStream(
      this.#ctx,
      { id: companyId, sandbox: options.sandbox === true },
      newest?.seq ?? '0',
      this.#options,
      () => this.#open.delete(stream),
    );
    this.#open.add(stream);
    return stream.output;
  }

  #checkRoom(companyId: number): void {
    if (this.count(companyId) >= this.#options.perCompany) throw new ApiError('too_many_streams');
    if (this.#open.size >= this.#options.total) throw new ApiError('unavailable');
  }

  #wakeAll(): void {
    for (const stream of this.#open) stream.wake();
  }
}

class CompanyStream {
  readonly output = new PassThrough();
  readonly companyId: number;
  readonly #sandbox: boolean;
  readonly #ctx: Pick<CloudContext, 'db' | 'clock' | 'serviceKey' | 'log'>;
  readonly #options: EventStreamOptions;
  readonly #heartbeat: NodeJS.Timeout;
  #cursor: string;
  #reading: Promise<void> | null = null;
  #again = false;
  #closed = false;

  constructor(
    ctx: Pick<CloudContext, 'db' | 'clock' | 'serviceKey' | 'log'>,
    company: { id: number; sandbox: boolean },
    cursor: string,
    options: EventStreamOptions,
    onClose: () => void,
  ) {
    this.#ctx = ctx;
    this.companyId = company.id;
    this.#sandbox = company.sandbox;
    this.#cursor = cursor;
    this.#options = options;
    // The retry field tells an EventSource how long to wait before it reconnects.
    this.output.write(`retry: 5000\n: listening to the events of company ${company.id}\n\n`);
    this.#heartbeat = setInterval(() => this.output.write(': keep-alive\n\n'), options.heartbeatMs);
    this.#heartbeat.unref();
    this.output.once('close', () => {
      this.#closed = true;
      clearInterval(this.#heartbeat);
      onClose();
    });
  }

  close(): void {
    this.output.end();
    this.output.destroy();
  }

  /** Reads what came after the cursor now, or right after the read in progress. */
  wake(): void {
    if (this.#closed) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = this.#readAll()
      .catch((error: unknown) => {
        this.#ctx.log.warn(
          { err: error, company: this.companyId },
          'an event stream could not read; it tries again',
        );
      })
      .finally(() => {
        this.#reading = null;
      });
  }

  async #readAll(): Promise<void> {
    do {
      this.#again = false;
      for (;;) {
        const sent = await this.#sendBatch();
        if (sent < this.#options.batch || this.#closed) break;
      }
    } while (this.#again && !this.#closed);
  }

  /** The next batch after the cursor, written once the client took the previous one; how many there were. */
  async #sendBatch(): Promise<number> {
    const events = await this.#ctx.db
      .selectFrom('events')
      .select(['id', 'type', 'at', 'data', 'seq'])
      .where('company_id', '=', this.companyId)
      .where('seq', '>', this.#cursor)
      .orderBy('seq')
      .limit(this.#options.batch)
      .execute();
    if (events.length === 0 || this.#closed) return 0;
    const now = this.#ctx.clock.now();
    const keys = await companySigningKeys(this.#ctx.db, this.companyId, now);
    let text = '';
    for (const event of events) {
      const body = webhookBody(
        { id: event.id, type: event.type, at: new Date(event.at), data: event.data },
        this.#sandbox,
      );
      const headers = webhookHeaders(
        this.#ctx.serviceKey,
        { id: event.id, timestamp: Math.floor(now.getTime() / 1000), body },
        keys,
      );
      text += `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify({ headers, body })}\n\n`;
      this.#cursor = event.seq;
    }
    if (!this.output.write(text)) await this.#drained();
    return events.length;
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.output.off('drain', done);
        this.output.off('close', done);
        resolve();
      };
      this.output.once('drain', done);
      this.output.once('close', done);
    });
  }
}
