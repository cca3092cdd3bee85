import type { Clock } from '../../foundation/clock.js';
import type { Database, DatabaseHandle } from '../../foundation/db/database.js';
import { ANSWER_CHANNEL, answersAmong, closeUnanswered, type Settled } from './questions.js';

/** How often the questions waited on here are read while any is open, when no notification comes. */
export const DEFAULT_QUESTION_POLL_MS = 250;

interface Waiting {
  answerBy: Date;
  settle: (settled: Settled) => void;
  fail: (error: unknown) => void;
}

/**
 * The `open` calls on this instance waiting for a customer's answer (docs/design.md section 10.8). The answer may
 * be written by any instance (the customer's phone reaches whichever one), so it is read from the database: at
 * once when a notification on ANSWER_CHANNEL says one was written, and every `pollMs` while any is open, which
 * also catches a notification lost with its connection. A question whose time has passed on the cloud's clock
 * is closed as unanswered here, unless an answer beat that to the row. One read serves every waiting call.
 */
export class QuestionWaits {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #waiting = new Map<number, Waiting>();
  #timer: NodeJS.Timeout | null = null;
  #reading: Promise<void> | null = null;
  #again = false;
  #unlisten: (() => Promise<void>) | null = null;

  constructor(db: Database, clock: Clock, pollMs = DEFAULT_QUESTION_POLL_MS) {
    this.#db = db;
    this.#clock = clock;
    this.#pollMs = pollMs;
  }

  /** Listens for answers written by any instance, where the database can say so. */
  async start(database: Pick<DatabaseHandle, 'listen'>): Promise<void> {
    if (database.listen) this.#unlisten = await database.listen(ANSWER_CHANNEL, () => this.#read());
  }

  async stop(): Promise<void> {
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    // A database already closed took its listening with it: nothing is left to undo.
    await unlisten?.().catch(() => {});
  }

  /** Resolves with the question's answer, or `unanswered` once `answerBy` has passed. */
  wait(journalId: number, answerBy: Date): Promise<Settled> {
    return new Promise<Settled>((settle, fail) => {
      this.#waiting.set(journalId, { answerBy, settle, fail });
      this.#timer ??= setInterval(() => this.#read(), this.#pollMs);
      this.#read();
    });
  }

  /** Questions waited on here now. */
  get open(): number {
    return this.#waiting.size;
  }

  /** One read at a time; a call meanwhile asks for one more after it, so no answer waits a whole poll. */
  #read(): void {
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = this.#settleDue().finally(() => {
      this.#reading = null;
      if (this.#again) {
        this.#again = false;
        this.#read();
      }
    });
  }

  async #settleDue(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    try {
      const answers = await answersAmong(this.#db, ids);
      const now = this.#clock.now();
      for (const id of ids) {
        const waiting = this.#waiting.get(id);
        if (!waiting) continue;
        const answer =
          answers.get(id) ?? (waiting.answerBy <= now ? await closeUnanswered(this.#db, id, now) : null);
        if (answer) this.#finish(id, (entry) => entry.settle(answer));
      }
    } catch (error) {
      // The database is briefly away: the next read tries again, and a call whose time is up fails, as an `open`
      // does when it cannot reach the database.
      const now = this.#clock.now();
      for (const id of ids) {
        if ((this.#waiting.get(id)?.answerBy ?? now) <= now) this.#finish(id, (entry) => entry.fail(error));
      }
    }
  }

  #finish(journalId: number, how: (entry: Waiting) => void): void {
    const entry = this.#waiting.get(journalId);
    if (!entry) return;
    this.#waiting.delete(journalId);
    how(entry);
    if (this.#waiting.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }
}
