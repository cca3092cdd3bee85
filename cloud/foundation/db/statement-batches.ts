/**
 * Many callers' rows in one statement (docs/design.md section 2.1). Rows submitted while a statement is under
 * way wait for the next, which takes all of them, so a burst costs a few round trips and commits rather than
 * one each, and a lone row goes at once (on the next turn of the event loop, with whatever arrived in the
 * same turn). `run` answers one result per row, in order; a statement that fails fails each of its rows.
 */
export interface BatchLimits {
  /** Rows in one statement: enough that a burst needs few, small enough that the statement stays small. */
  maxRows: number;
  /**
   * Statements under way at once. One would leave the database idle between a statement's return and the
   * next; two keep one filling while the other runs, which is where the throughput comes from.
   */
  maxInFlight: number;
  /**
   * How long a row may wait for others before its statement starts (ms; default 0, the next turn of the event
   * loop). For rows that nobody waits on: a burst then costs one statement where it would cost one per row.
   */
  lingerMs?: number;
  /**
   * Awaited after the linger, before the rows are taken, for rows that give way to other work (position reports
   * to openings, ../priority/foreground.ts): rows arriving meanwhile join them. Once it resolves, the rows held
   * go in statements of `maxRows` one after another, so that other work's statements, queued meanwhile, run
   * between them rather than behind all of them. `maxHeld` rows, and a flush, do not wait.
   */
  holdUntil?: () => Promise<void>;
  /** Rows held for `holdUntil` at most (default `maxRows`): a backlog this large goes without waiting. */
  maxHeld?: number;
}

interface Waiting<Row, Result> {
  row: Row;
  settle(result: Result): void;
  fail(error: unknown): void;
}

export class StatementBatches<Row, Result> {
  readonly #run: (rows: Row[]) => Promise<Result[]>;
  readonly #limits: BatchLimits;
  #queue: Waiting<Row, Result>[] = [];
  #inFlight = 0;
  #scheduled = false;
  #linger: ReturnType<typeof setTimeout> | null = null;
  /** Set by flush until the rows waiting then have all started: no linger for them. */
  #flushing = false;
  /** Set while the linger is over and `holdUntil` is awaited. */
  #holding = false;
  /** Rows at the head of the queue whose hold is over: they start without a linger or a hold. */
  #released = 0;

  constructor(run: (rows: Row[]) => Promise<Result[]>, limits: BatchLimits) {
    this.#run = run;
    this.#limits = limits;
  }

  submit(row: Row): Promise<Result> {
    return new Promise((settle, fail) => {
      this.#queue.push({ row, settle, fail });
      this.#schedule();
    });
  }

  /** Starts what waits now, without its linger: for a caller that must see every row written (a test, a stop). */
  flush(): void {
    this.#flushing = this.#queue.length > 0;
    this.#start();
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#limits.maxInFlight || this.#queue.length === 0) return;
    const lingerMs = this.#limits.lingerMs ?? 0;
    const backlog = this.#queue.length >= this.#fullAt();
    if (backlog && this.#holding) this.#released = this.#queue.length;
    const full = this.#flushing || this.#released > 0 || backlog;
    if (!full && this.#holding) return;
    if (lingerMs > 0 && !full) {
      this.#linger ??= setTimeout(() => {
        this.#linger = null;
        this.#hold();
      }, lingerMs);
      return;
    }
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#start();
    });
  }

  /** Rows that start without waiting: a statement's worth, or with a hold, `maxHeld` of them. */
  #fullAt(): number {
    return this.#limits.holdUntil ? (this.#limits.maxHeld ?? this.#limits.maxRows) : this.#limits.maxRows;
  }

  /** The linger is over: starts the rows once `holdUntil` allows, or at once without one. */
  #hold(): void {
    const holdUntil = this.#limits.holdUntil;
    if (!holdUntil) {
      this.#start();
      return;
    }
    this.#holding = true;
    const go = () => {
      this.#holding = false;
      this.#released = this.#queue.length;
      this.#start();
    };
    holdUntil().then(go, go);
  }

  #start(): void {
    if (this.#inFlight >= this.#limits.maxInFlight || this.#queue.length === 0) return;
    if (this.#linger) clearTimeout(this.#linger);
    this.#linger = null;
    const batch = this.#queue.splice(0, this.#limits.maxRows);
    this.#released = Math.max(0, this.#released - batch.length);
    if (this.#queue.length === 0) this.#flushing = false;
    this.#inFlight++;
    this.#runBatch(batch).finally(() => {
      this.#inFlight--;
      this.#schedule();
    });
    this.#schedule();
  }

  async #runBatch(batch: Waiting<Row, Result>[]): Promise<void> {
    try {
      const results = await this.#run(batch.map((waiting) => waiting.row));
      for (const [i, waiting] of batch.entries()) waiting.settle(results[i]!);
    } catch (error) {
      for (const waiting of batch) waiting.fail(error);
    }
  }
}
