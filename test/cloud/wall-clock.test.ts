import { describe, expect, it } from 'vitest';
import { instantOf, isTimeZone, wallClockOf } from '../../cloud/foundation/zones/wall-clock.js';

/**
 * Wall-clock times in a zone and back (docs/design.md section 3.1): a grant's start is typed in the barrier's
 * zone. Around the changes of 2026: Berlin 29 March (02:00 -> 03:00) and 25 October (03:00 -> 02:00), New York
 * 8 March (02:00 -> 03:00) and 1 November (02:00 -> 01:00).
 */
describe('wall-clock times', () => {
  it('reads an instant as the day and time of a zone', () => {
    const instant = new Date('2026-12-07T07:00:00Z');
    expect(wallClockOf(instant, 'Europe/Berlin')).toEqual({ day: '2026-12-07', time: '08:00' });
    expect(wallClockOf(instant, 'America/New_York')).toEqual({ day: '2026-12-07', time: '02:00' });
    expect(wallClockOf(instant, 'UTC')).toEqual({ day: '2026-12-07', time: '07:00' });
  });

  it('finds the instant a person means, in winter and in summer', () => {
    expect(instantOf({ day: '2026-12-07', time: '08:00' }, 'Europe/Berlin')).toEqual(
      new Date('2026-12-07T07:00:00Z'),
    );
    expect(instantOf({ day: '2026-07-01', time: '08:00' }, 'Europe/Berlin')).toEqual(
      new Date('2026-07-01T06:00:00Z'),
    );
    expect(instantOf({ day: '2026-07-01', time: '08:00' }, 'America/New_York')).toEqual(
      new Date('2026-07-01T12:00:00Z'),
    );
  });

  it('a time that happens twice is the first of the two', () => {
    expect(instantOf({ day: '2026-10-25', time: '02:30' }, 'Europe/Berlin')).toEqual(
      new Date('2026-10-25T00:30:00Z'),
    );
    expect(instantOf({ day: '2026-11-01', time: '01:30' }, 'America/New_York')).toEqual(
      new Date('2026-11-01T05:30:00Z'),
    );
  });

  it('a time the clocks skip lands after the gap', () => {
    const berlin = instantOf({ day: '2026-03-29', time: '02:30' }, 'Europe/Berlin')!;
    expect(berlin).toEqual(new Date('2026-03-29T01:30:00Z'));
    expect(wallClockOf(berlin, 'Europe/Berlin')).toEqual({ day: '2026-03-29', time: '03:30' });
    const newYork = instantOf({ day: '2026-03-08', time: '02:30' }, 'America/New_York')!;
    expect(wallClockOf(newYork, 'America/New_York')).toEqual({ day: '2026-03-08', time: '03:30' });
  });

  it('refuses what is not a day or a time, and knows the zones', () => {
    expect(instantOf({ day: '2026-02-30', time: '08:00' }, 'UTC')).toBeNull();
    expect(instantOf({ day: '2026-12-07', time: '24:00' }, 'UTC')).toBeNull();
    expect(instantOf({ day: 'next monday', time: '08:00' }, 'UTC')).toBeNull();
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});
