import { describe, expect, it } from 'vitest';
import { ClockMonitor } from '../../device/runtime/clock.js';
import { fakeClock } from './fixtures.js';

describe('clock monitor', () => {
  /** A monitor whose probe answers what `answers` holds at each check; the time moves 1 s per check. */
  const monitor = (answers: boolean[]) => {
    const clock = fakeClock();
    let i = 0;
    const probe = async () => {
      clock.advance(1000);
      return answers[i++] ?? answers.at(-1)!;
    };
    return { clock, monitor: new ClockMonitor({ probe, intervalMs: 60_000, now: clock.now }) };
  };

  it('trusts the clock from the first check that finds it synchronised, read after that check', async () => {
    const { clock, monitor: m } = monitor([false, false, true]);
    await m.start();
    expect([m.synced, m.trustedSince]).toEqual([false, null]);
    await m.check();
    expect(m.trustedSince).toBeNull();
    await m.check();
    expect([m.synced, m.trustedSince]).toEqual([true, clock.now()]);
    await m.stop();
  });

  it('keeps the first moment it trusted the clock when it loses and regains synchronisation', async () => {
    const { clock, monitor: m } = monitor([true, false, true]);
    await m.start();
    const first = clock.now();
    await m.check();
    expect([m.synced, m.trustedSince]).toEqual([false, first]);
    await m.check();
    expect([m.synced, m.trustedSince]).toEqual([true, first]);
    await m.stop();
  });

  it('counts a probe that fails as not synchronised', async () => {
    const m = new ClockMonitor({
      probe: () => Promise.reject(new Error('timedatectl: not found')),
      intervalMs: 60_000,
      now: Date.now,
    });
    await m.start();
    expect([m.synced, m.trustedSince]).toEqual([false, null]);
    await m.stop();
  });
});
