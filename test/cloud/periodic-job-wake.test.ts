import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeriodicJob } from '../../cloud/jobs/periodic-job.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A periodic job woken before its interval (cloud/jobs/periodic-job.ts), as the push delivery is by the journal's
 * notifications (docs/design.md section 10.6): it runs at once, never overlaps itself, runs again after a run
 * that a wake came during, and runs woken at most once per gap.
 */
const HOUR = 3600_000;
let job: PeriodicJob | undefined;

afterEach(async () => {
  await job?.stop();
  job = undefined;
});

/** A job whose runs are counted and take `runMs`, polling only once an hour, so any prompt run was woken. */
function countedJob(options: { runMs: number; wakeGapMs?: number }) {
  const runs: number[] = [];
  let running = 0;
  let overlapped = false;
  job = new PeriodicJob({
    name: 'woken',
    intervalMs: HOUR,
    log: recordingLogger(),
    ...(options.wakeGapMs === undefined ? {} : { wakeGapMs: options.wakeGapMs }),
    run: async () => {
      running += 1;
      overlapped ||= running > 1;
      runs.push(performance.now());
      await sleep(options.runMs);
      running -= 1;
    },
  });
  return { job, runs, overlapped: () => overlapped };
}

describe('a woken periodic job', () => {
  it('runs at once rather than at its interval', async () => {
    const { job, runs } = countedJob({ runMs: 0 });
    job.start();
    await waitFor(() => runs.length === 1, 'the first run');
    const woken = performance.now();
    job.wake();
    await waitFor(() => runs.length === 2, 'the woken run');
    expect(runs[1]! - woken).toBeLessThan(500);
  });

  it('woken during a run, runs once more right after it, never overlapping', async () => {
    const { job, runs, overlapped } = countedJob({ runMs: 100 });
    job.start();
    await waitFor(() => runs.length === 1, 'the first run');
    job.wake();
    job.wake();
    await waitFor(() => runs.length === 2, 'the run after it');
    await sleep(250);
    expect(runs).toHaveLength(2);
    expect(overlapped()).toBe(false);
  });

  it('woken again and again, runs at most once per gap', async () => {
    const { job, runs } = countedJob({ runMs: 0, wakeGapMs: 200 });
    job.start();
    await waitFor(() => runs.length === 1, 'the first run');
    for (let i = 0; i < 10; i++) {
      job.wake();
      await sleep(20);
    }
    await sleep(250);
    expect(runs.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < runs.length; i++) expect(runs[i]! - runs[i - 1]!).toBeGreaterThanOrEqual(190);
  });
});

describe('a periodic job whose first run waits an interval', () => {
  it('does not run at start, and runs once the interval has passed', async () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      job = new PeriodicJob({
        name: 'later',
        intervalMs: 10_000,
        log: recordingLogger(),
        firstAfterInterval: true,
        run: async () => {
          runs += 1;
        },
      });
      job.start();
      await vi.advanceTimersByTimeAsync(9_999);
      expect(runs).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(runs).toBe(1);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(runs).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
