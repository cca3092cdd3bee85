import { describe, expect, it } from 'vitest';
import { widerParts } from '../../cloud/rules/grant-shapes/narrowing.js';
import {
  daysWords,
  endWords,
  momentWords,
  openingsWords,
  REFUSAL_WORDS,
  shapeWords,
  startWords,
  windowWords,
} from '../../cloud/rules/grant-shapes/shape-words.js';
import {
  apiWindows,
  grantShapeOf,
  type KeyShape,
  keyShapeOf,
  storedWindows,
} from '../../cloud/rules/grant-shapes/stored-shape.js';
import { type GrantShape, type GrantWindow, grantShapeSchema } from '../../shared/company-api/grant-shape.js';

/**
 * The rules of a grant's shape that need no database (docs/design.md section 3.1): what a customer's grant
 * gives beyond the company's proposal, the shape in words, and the stored form of its windows.
 */
const NO_SHAPE: KeyShape = { startsAt: null, endsAt: null, windows: null, openings: null };
const shape = (parts: Partial<KeyShape>): KeyShape => ({ ...NO_SHAPE, ...parts });
const WORKDAYS: GrantWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri'];
const EVERY_DAY: GrantWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

describe('what a grant gives beyond the proposal', () => {
  const proposed = shape({
    windows: [{ days: WORKDAYS, from: '08:00', to: '12:00' }],
    startsAt: new Date('2026-12-07T07:00:00Z'),
    endsAt: new Date('2026-12-19T17:00:00Z'),
    openings: 5,
  });

  it('nothing, when the customer grants the proposal as it is', () => {
    expect(widerParts(proposed, proposed)).toEqual([]);
  });

  it('nothing, when the grant is narrower in every way', () => {
    const narrower = shape({
      windows: [{ days: ['mon'], from: '08:00', to: '10:00' }],
      startsAt: new Date('2026-12-08T07:00:00Z'),
      endsAt: new Date('2026-12-18T17:00:00Z'),
      openings: 2,
    });
    expect(widerParts(narrower, proposed)).toEqual([]);
  });

  it('each way it is wider, in words for the customer', () => {
    const wider = shape({
      windows: [{ days: WORKDAYS, from: '07:00', to: '12:00' }],
      startsAt: new Date('2026-12-06T07:00:00Z'),
      endsAt: new Date('2026-12-20T17:00:00Z'),
      openings: 6,
    });
    expect(widerParts(wider, proposed)).toEqual([
      'hours outside those asked for',
      'a start before the one asked for',
      'an end after the one asked for',
      'more openings than asked for',
    ]);
    expect(widerParts(NO_SHAPE, proposed)).toEqual([
      'any hour, where hours were asked for',
      'no start, where a start was asked for',
      'no end, where an end was asked for',
      'no limit on openings, where 5 were asked for',
    ]);
    expect(widerParts(NO_SHAPE, shape({ openings: 1 }))).toEqual([
      'no limit on openings, where one was asked for',
    ]);
  });

  it('a proposal that sets nothing bounds nothing', () => {
    expect(widerParts(proposed, NO_SHAPE)).toEqual([]);
    expect(widerParts(NO_SHAPE, NO_SHAPE)).toEqual([]);
  });

  it('hours within a union of windows are within it, even split differently', () => {
    const asked = shape({
      windows: [
        { days: ['mon', 'tue'], from: '08:00', to: '10:00' },
        { days: ['mon'], from: '10:00', to: '12:00' },
      ],
    });
    expect(widerParts(shape({ windows: [{ days: ['mon'], from: '09:00', to: '11:30' }] }), asked)).toEqual(
      [],
    );
    expect(widerParts(shape({ windows: [{ days: ['tue'], from: '09:00', to: '11:30' }] }), asked)).toEqual([
      'hours outside those asked for',
    ]);
    // One minute beyond is beyond.
    expect(widerParts(shape({ windows: [{ days: ['mon'], from: '07:59', to: '12:00' }] }), asked)).toEqual([
      'hours outside those asked for',
    ]);
  });

  it('windows across midnight cover into the next day', () => {
    const asked = shape({ windows: [{ days: ['fri'], from: '22:00', to: '06:00' }] });
    expect(widerParts(shape({ windows: [{ days: ['sat'], from: '00:00', to: '06:00' }] }), asked)).toEqual(
      [],
    );
    expect(widerParts(shape({ windows: [{ days: ['fri'], from: '23:00', to: '02:00' }] }), asked)).toEqual(
      [],
    );
    expect(widerParts(shape({ windows: [{ days: ['sat'], from: '05:00', to: '07:00' }] }), asked)).toEqual([
      'hours outside those asked for',
    ]);
    expect(widerParts(shape({ windows: [{ days: ['fri'], from: '00:00', to: '06:00' }] }), asked)).toEqual([
      'hours outside those asked for',
    ]);
    // Two windows ending at midnight and starting at it are one night across midnight.
    const split = shape({
      windows: [
        { days: ['fri'], from: '22:00', to: '24:00' },
        { days: ['sat'], from: '00:00', to: '06:00' },
      ],
    });
    expect(widerParts(split, asked)).toEqual([]);
    expect(widerParts(asked, split)).toEqual([]);
  });

  it('the week wraps: Sunday night runs into Monday morning', () => {
    const asked = shape({ windows: [{ days: ['sun'], from: '20:00', to: '07:00' }] });
    expect(widerParts(shape({ windows: [{ days: ['mon'], from: '05:00', to: '07:00' }] }), asked)).toEqual(
      [],
    );
    expect(widerParts(shape({ windows: [{ days: ['sun'], from: '05:00', to: '07:00' }] }), asked)).toEqual([
      'hours outside those asked for',
    ]);
    const everyHour = shape({ windows: [{ days: EVERY_DAY, from: '00:00', to: '24:00' }] });
    expect(widerParts(everyHour, NO_SHAPE)).toEqual([]);
    expect(widerParts(asked, everyHour)).toEqual([]);
    expect(widerParts(everyHour, asked)).toEqual(['hours outside those asked for']);
  });
});

describe('the shape in words', () => {
  it('says windows by their days and hours', () => {
    expect(windowWords({ days: WORKDAYS, from: '08:00', to: '12:00' })).toBe(
      'Mondays to Fridays, 8:00 to 12:00',
    );
    expect(windowWords({ days: ['thu', 'mon'], from: '22:00', to: '06:00' })).toBe(
      'Mondays and Thursdays, 22:00 to 6:00 the next morning',
    );
    expect(windowWords({ days: EVERY_DAY, from: '07:00', to: '19:00' })).toBe('Every day, 7:00 to 19:00');
    expect(windowWords({ days: ['sat', 'sun'], from: '00:00', to: '24:00' })).toBe(
      'Saturdays and Sundays, all day',
    );
    expect(windowWords({ days: ['fri'], from: '20:30', to: '24:00' })).toBe('Fridays, 20:30 to midnight');
    expect(windowWords({ days: ['sun'], from: '18:00', to: '14:00' })).toBe(
      'Sundays, 18:00 to 14:00 the next day',
    );
  });

  it('groups days that follow each other', () => {
    expect(daysWords(['mon', 'tue', 'wed', 'sat'])).toBe('Mondays to Wednesdays and Saturdays');
    expect(daysWords(['mon', 'wed', 'fri'])).toBe('Mondays, Wednesdays and Fridays');
    expect(daysWords(['sun'])).toBe('Sundays');
  });

  it("says a moment as the barrier's clock shows it", () => {
    const at = new Date('2026-12-07T07:00:00Z');
    expect(startWords(at, 'Europe/Berlin')).toBe('from Monday 7 December 2026, 8:00');
    expect(startWords(at, 'Europe/Berlin', true)).toBe('from Monday 7 December 2026, 8:00 (Europe/Berlin)');
    expect(startWords(at, 'America/New_York', true)).toBe(
      'from Monday 7 December 2026, 2:00 (America/New_York)',
    );
    expect(endWords(new Date('2026-12-19T23:30:00Z'), 'Europe/Berlin')).toBe(
      'until Sunday 20 December 2026, 0:30',
    );
    // in summer, the same clock time is another instant
    expect(momentWords(new Date('2026-07-01T06:00:00Z'), 'Europe/Berlin')).toBe(
      'Wednesday 1 July 2026, 8:00',
    );
    expect(momentWords(new Date('2026-07-01T12:00:00Z'), 'America/New_York')).toBe(
      'Wednesday 1 July 2026, 8:00',
    );
  });

  it('says the openings', () => {
    expect(openingsWords(5, 2)).toBe('5 openings in all (2 used)');
    expect(openingsWords(5)).toBe('5 openings in all');
    expect(openingsWords(1)).toBe('one opening');
  });

  it('says a whole shape, part by part', () => {
    const whole = shape({
      windows: [
        { days: WORKDAYS, from: '08:00', to: '12:00' },
        { days: ['sat'], from: '22:00', to: '02:00' },
      ],
      startsAt: new Date('2026-12-07T07:00:00Z'),
      endsAt: new Date('2026-12-19T17:00:00Z'),
      openings: 5,
    });
    expect(shapeWords(whole, 'Europe/Berlin', { used: 2, withZone: true })).toEqual([
      'Mondays to Fridays, 8:00 to 12:00',
      'Saturdays, 22:00 to 2:00 the next morning',
      'from Monday 7 December 2026, 8:00 (Europe/Berlin)',
      'until Saturday 19 December 2026, 18:00 (Europe/Berlin)',
      '5 openings in all (2 used)',
    ]);
    expect(shapeWords(whole, 'America/New_York')).toEqual([
      'Mondays to Fridays, 8:00 to 12:00',
      'Saturdays, 22:00 to 2:00 the next morning',
      'from Monday 7 December 2026, 2:00',
      'until Saturday 19 December 2026, 12:00',
      '5 openings in all',
    ]);
    expect(shapeWords(NO_SHAPE, 'Europe/Berlin')).toEqual([]);
  });

  it("says each refusal for the customer's journal", () => {
    expect(REFUSAL_WORDS).toEqual({
      not_started: 'before the start you set',
      outside_hours: 'outside the hours you allowed',
      openings_used: 'after all the openings you allowed were used',
    });
  });
});

describe('the stored form', () => {
  it('holds windows as ISO weekdays and minutes of the day, and gives them back', () => {
    const windows: GrantWindow[] = [
      { days: ['fri', 'mon'], from: '08:00', to: '12:00' },
      { days: ['sun'], from: '22:30', to: '06:00' },
      { days: EVERY_DAY, from: '00:00', to: '24:00' },
    ];
    const stored = storedWindows(windows);
    expect(stored).toEqual([
      { days: [1, 5], from: 480, to: 720 },
      { days: [7], from: 1350, to: 360 },
      { days: [1, 2, 3, 4, 5, 6, 7], from: 0, to: 1440 },
    ]);
    // Read back as the database gives it, and as JSON text; the days come back in the week's order.
    const back = [
      { days: ['mon', 'fri'], from: '08:00', to: '12:00' },
      { days: ['sun'], from: '22:30', to: '06:00' },
      { days: EVERY_DAY, from: '00:00', to: '24:00' },
    ];
    expect(apiWindows(JSON.parse(JSON.stringify(stored)))).toEqual(back);
    expect(apiWindows(JSON.stringify(stored))).toEqual(back);
    expect(storedWindows(apiWindows(stored))).toEqual(stored);
  });

  it('refuses a stored value that storedWindows would not write', () => {
    const bad: unknown[] = [
      null,
      [],
      {},
      [{ days: [1, 5], from: 480 }],
      [{ days: [0], from: 480, to: 720 }],
      [{ days: [8], from: 480, to: 720 }],
      [{ days: [1, 1], from: 480, to: 720 }],
      [{ days: [1], from: 480, to: 1441 }],
      [{ days: [1], from: 1440, to: 60 }],
      [{ days: [1], from: 480, to: 480 }],
      [{ days: [1], from: '08:00', to: '12:00' }],
      [{ days: [1], from: 480.5, to: 720 }],
      [{ days: [1], from: 480, to: 720, extra: true }],
    ];
    for (const value of bad) expect(() => apiWindows(value), JSON.stringify(value)).toThrow(/stored windows/);
  });

  it("turns the API's shape into the cloud's and back", () => {
    const api: GrantShape = grantShapeSchema.parse({
      windows: [{ days: ['mon', 'tue'], from: '08:00', to: '12:00' }],
      starts_at: '2026-12-07 07:00:00',
      ends_at: '2026-12-19 17:00:00',
      openings: 5,
    });
    const key = keyShapeOf(api);
    expect(key).toEqual({
      windows: [{ days: ['mon', 'tue'], from: '08:00', to: '12:00' }],
      startsAt: new Date('2026-12-07T07:00:00Z'),
      endsAt: new Date('2026-12-19T17:00:00Z'),
      openings: 5,
    });
    expect(grantShapeOf(key)).toEqual(api);
  });

  it('leaves out of the API form what has no value', () => {
    expect(keyShapeOf({})).toEqual(NO_SHAPE);
    expect(grantShapeOf(NO_SHAPE)).toEqual({});
    expect(grantShapeOf(shape({ openings: 1 }))).toEqual({ openings: 1 });
    expect(grantShapeOf(shape({ endsAt: new Date('2026-12-01T00:00:00Z') }))).toEqual({
      ends_at: '2026-12-01 00:00:00',
    });
  });
});
