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

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#limits.maxInFlight || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#start();
    });
  }

  #start(): void {
    if (this.#inFlight >= this.#limits.maxInFlight || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, this.#limits.maxRows);
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
