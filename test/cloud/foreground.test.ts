import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Foreground, QUIET_MS } from '../../cloud/foundation/priority/foreground.js';

/**
 * Background work gives way to openings (docs/design.md section 7.5): it waits for a moment with no opening under
 * way and none for QUIET_MS, or for its longest wait, on vitest's fake timers.
 */

let foreground: Foreground;

beforeEach(() => {
  vi.useFakeTimers();
  foreground = new Foreground(() => Date.now());
});

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled after the timers moved by `ms`. */
async function settledAfter(promise: Promise<void>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
}

describe('foreground work', () => {
  it('with nothing under way for a while, background work goes at once', async () => {
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(await settledAfter(foreground.quiet(1000), 0)).toBe(true);
  });

  it('waits while an opening is under way, then for a quiet moment after it', async () => {
    const done = foreground.begin();
    const quiet = foreground.quiet(1000);
    expect(await settledAfter(quiet, 500)).toBe(false);
    done();
    expect(await settledAfter(quiet, QUIET_MS - 1)).toBe(false);
    expect(await settledAfter(quiet, 1)).toBe(true);
  });

  it('an opening begun within the quiet time puts it off again', async () => {
    foreground.begin()();
    const quiet = foreground.quiet(1000);
    await vi.advanceTimersByTimeAsync(QUIET_MS - 5);
    foreground.begin()();
    expect(await settledAfter(quiet, 10)).toBe(false);
    expect(await settledAfter(quiet, QUIET_MS)).toBe(true);
  });

  it('under openings that never pause, it goes after its longest wait, late but not lost', async () => {
    const ends: (() => void)[] = [foreground.begin()];
    const quiet = foreground.quiet(1000);
    for (let t = 0; t < 990; t += 10) {
      await vi.advanceTimersByTimeAsync(10);
      ends.push(foreground.begin());
      ends.shift()?.();
    }
    expect(foreground.underWay).toBe(1);
    expect(await settledAfter(quiet, 10)).toBe(true);
  });

  it('marking an opening done twice counts it once', () => {
    const first = foreground.begin();
    foreground.begin();
    first();
    first();
    expect(foreground.underWay).toBe(1);
  });
});
