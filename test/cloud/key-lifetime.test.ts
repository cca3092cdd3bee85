import { describe, expect, it } from 'vitest';
import { wallClockOf } from '../../cloud/foundation/zones/wall-clock.js';
import { endOfDay, lastDayOf, lifetimeText, todayIn } from '../../cloud/rules/access-keys/key-lifetime.js';

/*
 * "Until a date" (docs/design.md section 10.3): the key lasts the whole of that day where the barrier is, and
 * ends at the midnight after it in the barrier's zone, whatever daylight saving does that night.
 */
const now = new Date('2026-01-10T12:00:00Z');

function end(day: string, zone: string): Date {
  const result = endOfDay(day, now, zone);
  if (!result.ok) throw new Error(result.problem);
  return result.expiresAt;
}

describe('the end of a day of access', () => {
  it('is midnight in the barrier’s zone, which is another instant in UTC for each zone', () => {
    expect(end('2026-11-30', 'UTC').toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(end('2026-11-30', 'Europe/Berlin').toISOString()).toBe('2026-11-30T23:00:00.000Z');
    expect(end('2026-11-30', 'America/New_York').toISOString()).toBe('2026-12-01T05:00:00.000Z');
  });

  it('follows daylight saving: the night clocks change ends at the new offset', () => {
    // Berlin goes to summer time on 29 March 2026, New York on 8 March and back on 1 November.
    expect(end('2026-03-28', 'Europe/Berlin').toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(end('2026-03-29', 'Europe/Berlin').toISOString()).toBe('2026-03-29T22:00:00.000Z');
    expect(end('2026-03-08', 'America/New_York').toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(end('2026-11-01', 'America/New_York').toISOString()).toBe('2026-11-02T05:00:00.000Z');
  });

  it('is, for every day of a year in zones with odd offsets and changes, the first instant of the next day', () => {
    const zones = [
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'America/Santiago',
      'Asia/Kolkata',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
    ];
    for (const zone of zones) {
      for (let d = 0; d < 366; d += 1) {
        const day = new Date(Date.UTC(2026, 0, 11 + d)).toISOString().slice(0, 10);
        const next = new Date(Date.UTC(2026, 0, 12 + d)).toISOString().slice(0, 10);
        const at = end(day, zone);
        expect(wallClockOf(new Date(at.getTime() - 1), zone).day, `${day} ${zone}`).toBe(day);
        expect(wallClockOf(at, zone).day, `${day} ${zone}`).toBe(next);
      }
    }
  });

  it('reads back as the day it was given, so the form shows it again', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) {
      expect(lastDayOf(end('2026-03-29', zone), zone)?.toISOString().slice(0, 10)).toBe('2026-03-29');
    }
    // A key that ends at another time of day there has no last day: it is shown to the minute.
    expect(lastDayOf(new Date('2026-12-01T00:00:00Z'), 'Europe/Berlin')).toBeNull();
  });

  it('counts "today" where the barrier is', () => {
    const lateEvening = new Date('2026-11-30T23:30:00Z');
    expect(todayIn(lateEvening, 'Europe/Berlin')).toBe('2026-12-01');
    expect(todayIn(lateEvening, 'America/New_York')).toBe('2026-11-30');
    // The 30th is over in Berlin, and still today in New York.
    expect(endOfDay('2026-11-30', lateEvening, 'Europe/Berlin')).toEqual({
      ok: false,
      problem: 'The last day must be today or later.',
    });
    expect(endOfDay('2026-11-30', lateEvening, 'America/New_York').ok).toBe(true);
  });

  it('is said with the barrier’s zone, and when that is for a reader elsewhere', () => {
    const berlin = end('2026-11-30', 'Europe/Berlin');
    expect(lifetimeText(berlin, 'Europe/Berlin', 'Europe/Berlin')).toBe(
      'until the end of 30 Nov 2026 (Europe/Berlin)',
    );
    const elsewhere = lifetimeText(berlin, 'America/New_York', 'Europe/Berlin');
    expect(elsewhere).toMatch(/^until the end of 30 Nov 2026 \(Europe\/Berlin\), that is 30 Nov 2026, 18:00/);
    expect(elsewhere).toContain('America/New_York');
    expect(lifetimeText(null, 'Europe/Berlin', 'Europe/Berlin')).toBe('until you withdraw it');
  });

  it('refuses what is not a day, a day that does not exist, and a day too far ahead', () => {
    expect(endOfDay('30/11/2026', now, 'UTC')).toMatchObject({ ok: false });
    expect(endOfDay('2026-02-30', now, 'Europe/Berlin')).toEqual({
      ok: false,
      problem: 'That day does not exist in the calendar; check the date.',
    });
    expect(endOfDay('2045-01-01', now, 'UTC')).toMatchObject({ ok: false });
  });
});
