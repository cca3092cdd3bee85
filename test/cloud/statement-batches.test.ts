import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StatementBatches } from '../../cloud/foundation/db/statement-batches.js';

/**
 * Many callers' rows in one statement (docs/design.md section 2.1), here with a statement that records what it
 * was given; the linger of rows nobody waits on (position reports, section 7.5) on vitest's fake timers.
 */

let statements: number[][];
const run = async (rows: number[]) => {
  statements.push(rows);
  return rows.map((row) => row * 10);
};

beforeEach(() => {
  statements = [];
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('statement batches', () => {
  it('without a linger, rows of the same moment share a statement that starts at once', async () => {
    const batches = new StatementBatches(run, { maxRows: 10, maxInFlight: 1 });
    const results = [batches.submit(1), batches.submit(2)];
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all(results)).toEqual([10, 20]);
    expect(statements).toEqual([[1, 2]]);
  });

  it('with a linger, rows arriving within it share one statement, started when it ends', async () => {
    const batches = new StatementBatches(run, { maxRows: 10, maxInFlight: 1, lingerMs: 100 });
    const first = batches.submit(1);
    await vi.advanceTimersByTimeAsync(60);
    const second = batches.submit(2);
    await vi.advanceTimersByTimeAsync(39);
    expect(statements).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(statements).toEqual([[1, 2]]);
  });

  it('a full statement does not wait for its linger', async () => {
    const batches = new StatementBatches(run, { maxRows: 3, maxInFlight: 1, lingerMs: 100 });
    const results = [1, 2, 3, 4].map((row) => batches.submit(row));
    await vi.advanceTimersByTimeAsync(0);
    expect(statements).toEqual([[1, 2, 3]]);
    await vi.advanceTimersByTimeAsync(100);
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
    expect(statements).toEqual([[1, 2, 3], [4]]);
  });

  it('flush starts what waits without its linger, also behind a statement under way', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = async (rows: number[]) => {
      statements.push(rows);
      if (statements.length === 1) await held;
      return rows.map((row) => row * 10);
    };
    const batches = new StatementBatches(slow, { maxRows: 10, maxInFlight: 1, lingerMs: 100 });
    const first = batches.submit(1);
    batches.flush();
    await vi.advanceTimersByTimeAsync(0);
    expect(statements).toEqual([[1]]);
    const second = batches.submit(2);
    batches.flush();
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(statements).toEqual([[1], [2]]);
    expect(await Promise.all([first, second])).toEqual([10, 20]);
  });

  it('rows that give way wait past their linger until released, and rows arriving meanwhile join them', async () => {
    let release!: () => void;
    const hold = () =>
      new Promise<void>((resolve) => {
        release = resolve;
      });
    const batches = new StatementBatches(run, {
      maxRows: 10,
      maxInFlight: 1,
      lingerMs: 100,
      holdUntil: hold,
    });
    const first = batches.submit(1);
    await vi.advanceTimersByTimeAsync(500);
    const second = batches.submit(2);
    await vi.advanceTimersByTimeAsync(500);
    expect(statements).toEqual([]);
    release();
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(statements).toEqual([[1, 2]]);
  });

  it('a full statement and a flush do not wait to be released', async () => {
    const batches = new StatementBatches(run, {
      maxRows: 2,
      maxInFlight: 1,
      lingerMs: 100,
      holdUntil: () => new Promise<void>(() => {}),
    });
    const full = [batches.submit(1), batches.submit(2)];
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all(full)).toEqual([10, 20]);
    const flushed = batches.submit(3);
    await vi.advanceTimersByTimeAsync(1000);
    expect(statements).toEqual([[1, 2]]);
    batches.flush();
    expect(await flushed).toBe(30);
    expect(statements).toEqual([[1, 2], [3]]);
  });

  it('rows released together go in statements of maxRows, one after another, each behind what came meanwhile', async () => {
    let release!: () => void;
    const order: string[] = [];
    const recorded = async (rows: number[]) => {
      order.push(`reports ${rows.join(',')}`);
      statements.push(rows);
      // Other work's statement, queued while this one runs, as an opening's is on the same database.
      queueMicrotask(() => order.push('opening'));
      return rows.map((row) => row * 10);
    };
    const batches = new StatementBatches(recorded, {
      maxRows: 2,
      maxHeld: 100,
      maxInFlight: 1,
      lingerMs: 100,
      holdUntil: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    });
    const results = [1, 2, 3, 4, 5].map((row) => batches.submit(row));
    await vi.advanceTimersByTimeAsync(1000);
    expect(statements).toEqual([]);
    release();
    await vi.advanceTimersByTimeAsync(10);
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50]);
    expect(statements).toEqual([[1, 2], [3, 4], [5]]);
    expect(order).toEqual(['reports 1,2', 'opening', 'reports 3,4', 'opening', 'reports 5', 'opening']);
  });

  it('maxHeld rows end the hold for all of them; rows arriving after the backlog has gone wait again', async () => {
    const batches = new StatementBatches(run, {
      maxRows: 2,
      maxHeld: 3,
      maxInFlight: 1,
      lingerMs: 100,
      holdUntil: () => new Promise<void>(() => {}),
    });
    const first = [batches.submit(1), batches.submit(2)];
    await vi.advanceTimersByTimeAsync(1000);
    expect(statements).toEqual([]);
    const backlog = [batches.submit(3), batches.submit(4)];
    await vi.advanceTimersByTimeAsync(10);
    expect(await Promise.all([...first, ...backlog])).toEqual([10, 20, 30, 40]);
    expect(statements).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const later = batches.submit(5);
    let done = false;
    void later.then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(done).toBe(false);
  });
});
