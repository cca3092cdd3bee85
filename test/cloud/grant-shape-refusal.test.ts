import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GrantShapeRefusal,
  grantShapeRefusal,
} from '../../cloud/rules/grant-shapes/grant-shape-refusal.js';
import {
  type KeyShape,
  type StoredWindow,
  storedWindows,
} from '../../cloud/rules/grant-shapes/stored-shape.js';
import type { GrantWindow } from '../../shared/company-api/grant-shape.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * grant_shape_refusal (cloud/rules/grant-shapes/grant-shape-refusal.sql; docs/design.md section 3.1), asked
 * through a real database with the moment as a parameter: that is the clock. Instants are written with the
 * offset the barrier's zone has at them, so each reads as the time its clock shows.
 *
 * The changes of daylight-saving time in 2026: Berlin 29 March 02:00 -> 03:00 and 25 October 03:00 -> 02:00;
 * New York 8 March 02:00 -> 03:00 and 1 November 02:00 -> 01:00.
 */
const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

const NO_SHAPE: KeyShape = { startsAt: null, endsAt: null, windows: null, openings: null };

function refusalAt(
  at: string,
  options: { shape?: Partial<KeyShape>; zone?: string; used?: number },
): Promise<GrantShapeRefusal | null> {
  return grantShapeRefusal(database.db, {
    shape: { ...NO_SHAPE, ...options.shape },
    zone: options.zone ?? BERLIN,
    used: options.used ?? 0,
    now: new Date(at),
  });
}

/** What the windows answer at each instant: null where they allow, 'outside_hours' elsewhere. */
async function answers(windows: GrantWindow[], zone: string, instants: string[]) {
  const found: Record<string, GrantShapeRefusal | null> = {};
  for (const at of instants) found[at] = await refusalAt(at, { shape: { windows }, zone });
  return found;
}

const weekdayMornings: GrantWindow[] = [
  { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' },
];
const fridayNights: GrantWindow[] = [{ days: ['fri'], from: '22:00', to: '06:00' }];
const sundayNights: GrantWindow[] = [{ days: ['sun'], from: '22:00', to: '06:00' }];

describe('a weekday morning window, 08:00 to 12:00', () => {
  it('in Berlin, in winter: allows from 08:00 to the second before 12:00', async () => {
    expect(
      await answers(weekdayMornings, BERLIN, [
        '2026-12-02T07:59:59+01:00',
        '2026-12-02T08:00:00+01:00',
        '2026-12-02T10:00:00+01:00',
        '2026-12-02T11:59:59+01:00',
        '2026-12-02T12:00:00+01:00',
        '2026-12-05T10:00:00+01:00',
      ]),
    ).toEqual({
      '2026-12-02T07:59:59+01:00': 'outside_hours',
      '2026-12-02T08:00:00+01:00': null,
      '2026-12-02T10:00:00+01:00': null,
      '2026-12-02T11:59:59+01:00': null,
      '2026-12-02T12:00:00+01:00': 'outside_hours',
      // a Saturday
      '2026-12-05T10:00:00+01:00': 'outside_hours',
    });
  });

  it('in New York, in winter and in summer', async () => {
    expect(
      await answers(weekdayMornings, NEW_YORK, [
        '2026-12-02T07:59:59-05:00',
        '2026-12-02T08:00:00-05:00',
        '2026-12-02T11:59:59-05:00',
        '2026-12-02T12:00:00-05:00',
        '2026-07-01T08:00:00-04:00',
        '2026-07-01T12:00:00-04:00',
        '2026-07-04T10:00:00-04:00',
      ]),
    ).toEqual({
      '2026-12-02T07:59:59-05:00': 'outside_hours',
      '2026-12-02T08:00:00-05:00': null,
      '2026-12-02T11:59:59-05:00': null,
      '2026-12-02T12:00:00-05:00': 'outside_hours',
      '2026-07-01T08:00:00-04:00': null,
      '2026-07-01T12:00:00-04:00': 'outside_hours',
      '2026-07-04T10:00:00-04:00': 'outside_hours',
    });
  });

  it("is read in the barrier's zone: 10:00 in Berlin is 04:00 in New York", async () => {
    expect(await answers(weekdayMornings, NEW_YORK, ['2026-12-02T10:00:00+01:00'])).toEqual({
      '2026-12-02T10:00:00+01:00': 'outside_hours',
    });
  });
});

describe('a window across midnight: Friday 22:00 to 06:00', () => {
  const expected = (offset: string) => ({
    [`2026-12-03T23:00:00${offset}`]: 'outside_hours', // Thursday night
    [`2026-12-04T21:59:59${offset}`]: 'outside_hours',
    [`2026-12-04T22:00:00${offset}`]: null,
    [`2026-12-04T23:00:00${offset}`]: null,
    [`2026-12-05T00:00:00${offset}`]: null,
    [`2026-12-05T05:59:00${offset}`]: null,
    [`2026-12-05T05:59:59${offset}`]: null,
    [`2026-12-05T06:00:00${offset}`]: 'outside_hours',
    [`2026-12-05T23:00:00${offset}`]: 'outside_hours', // Saturday night
    [`2026-12-04T05:00:00${offset}`]: 'outside_hours', // Friday morning belongs to Thursday's night
  });

  it('in Berlin: Friday night into Saturday morning, and no other night', async () => {
    const cases = expected('+01:00');
    expect(await answers(fridayNights, BERLIN, Object.keys(cases))).toEqual(cases);
  });

  it('in New York', async () => {
    const cases = expected('-05:00');
    expect(await answers(fridayNights, NEW_YORK, Object.keys(cases))).toEqual(cases);
  });

  it('Sunday night runs into Monday morning', async () => {
    const cases = {
      '2026-12-06T21:59:59+01:00': 'outside_hours',
      '2026-12-06T23:00:00+01:00': null,
      '2026-12-07T05:00:00+01:00': null,
      '2026-12-07T06:00:00+01:00': 'outside_hours',
      '2026-12-07T23:00:00+01:00': 'outside_hours', // Monday night
      '2026-12-08T05:00:00+01:00': 'outside_hours', // Tuesday morning
    };
    expect(await answers(sundayNights, BERLIN, Object.keys(cases))).toEqual(cases);
    const newYork = {
      '2026-12-06T23:00:00-05:00': null,
      '2026-12-07T05:59:59-05:00': null,
      '2026-12-07T06:00:00-05:00': 'outside_hours',
    };
    expect(await answers(sundayNights, NEW_YORK, Object.keys(newYork))).toEqual(newYork);
  });
});

/** How many minutes of real time the windows allow from `from` to `to`. */
async function allowedMinutes(
  windows: GrantWindow[],
  zone: string,
  from: string,
  to: string,
): Promise<number> {
  const { rows } = await sql<{ allowed: number }>`
    select count(*)::integer as allowed
      from generate_series(${new Date(from)}::timestamptz, ${new Date(to)}::timestamptz - interval '1 minute',
                           interval '1 minute') as minute (at)
     where grant_shape_refusal(null, ${JSON.stringify(storedWindows(windows))}::jsonb, ${zone}::text, null, 0,
                               minute.at) is null
  `.execute(database.db);
  return rows[0]!.allowed;
}

const sunday = (from: string, to: string): GrantWindow[] => [{ days: ['sun'], from, to }];

describe('the night clocks go forward: the skipped hour does not happen', () => {
  it('in Berlin on 29 March: 02:00 to 03:00 allows nothing, 01:00 to 04:00 is two real hours', async () => {
    const night = ['2026-03-28T22:00:00Z', '2026-03-29T06:00:00Z'] as const;
    expect(await allowedMinutes(sunday('02:00', '03:00'), BERLIN, ...night)).toBe(0);
    expect(await allowedMinutes(sunday('02:30', '02:40'), BERLIN, ...night)).toBe(0);
    expect(await allowedMinutes(sunday('01:00', '04:00'), BERLIN, ...night)).toBe(120);
    expect(
      await answers(sunday('01:00', '04:00'), BERLIN, [
        '2026-03-29T00:59:59+01:00',
        '2026-03-29T01:00:00+01:00',
        '2026-03-29T01:59:59+01:00',
        '2026-03-29T03:00:00+02:00',
        '2026-03-29T03:59:59+02:00',
        '2026-03-29T04:00:00+02:00',
      ]),
    ).toEqual({
      '2026-03-29T00:59:59+01:00': 'outside_hours',
      '2026-03-29T01:00:00+01:00': null,
      '2026-03-29T01:59:59+01:00': null,
      // one second later the clock shows 03:00:00
      '2026-03-29T03:00:00+02:00': null,
      '2026-03-29T03:59:59+02:00': null,
      '2026-03-29T04:00:00+02:00': 'outside_hours',
    });
  });

  it('in New York on 8 March', async () => {
    const night = ['2026-03-08T03:00:00Z', '2026-03-08T12:00:00Z'] as const;
    expect(await allowedMinutes(sunday('02:00', '03:00'), NEW_YORK, ...night)).toBe(0);
    expect(await allowedMinutes(sunday('01:00', '04:00'), NEW_YORK, ...night)).toBe(120);
    expect(
      await answers(sunday('01:00', '03:00'), NEW_YORK, [
        '2026-03-08T01:59:59-05:00',
        '2026-03-08T03:00:00-04:00',
      ]),
    ).toEqual({
      '2026-03-08T01:59:59-05:00': null,
      '2026-03-08T03:00:00-04:00': 'outside_hours',
    });
  });
});

describe('the night clocks go back: the repeated hour is inside a window both times', () => {
  it('in Berlin on 25 October: 02:00 to 03:00 allows two real hours', async () => {
    const night = ['2026-10-24T20:00:00Z', '2026-10-25T06:00:00Z'] as const;
    expect(await allowedMinutes(sunday('02:00', '03:00'), BERLIN, ...night)).toBe(120);
    expect(await allowedMinutes(sunday('01:00', '02:00'), BERLIN, ...night)).toBe(60);
    expect(await allowedMinutes(sunday('03:00', '04:00'), BERLIN, ...night)).toBe(60);
    expect(
      await answers(sunday('02:00', '03:00'), BERLIN, [
        '2026-10-25T01:59:59+02:00',
        '2026-10-25T02:00:00+02:00',
        '2026-10-25T02:59:59+02:00',
        '2026-10-25T02:00:00+01:00',
        '2026-10-25T02:59:59+01:00',
        '2026-10-25T03:00:00+01:00',
      ]),
    ).toEqual({
      '2026-10-25T01:59:59+02:00': 'outside_hours',
      '2026-10-25T02:00:00+02:00': null,
      '2026-10-25T02:59:59+02:00': null,
      '2026-10-25T02:00:00+01:00': null,
      '2026-10-25T02:59:59+01:00': null,
      '2026-10-25T03:00:00+01:00': 'outside_hours',
    });
  });

  it('in New York on 1 November: 01:00 to 02:00 allows both passes, and 00:00 to 03:00 is four real hours', async () => {
    const night = ['2026-11-01T00:00:00Z', '2026-11-01T12:00:00Z'] as const;
    expect(await allowedMinutes(sunday('01:00', '02:00'), NEW_YORK, ...night)).toBe(120);
    expect(await allowedMinutes(sunday('00:00', '03:00'), NEW_YORK, ...night)).toBe(240);
    expect(
      await answers(sunday('01:00', '02:00'), NEW_YORK, [
        '2026-11-01T00:59:59-04:00',
        '2026-11-01T01:30:00-04:00',
        '2026-11-01T01:30:00-05:00',
        '2026-11-01T02:00:00-05:00',
      ]),
    ).toEqual({
      '2026-11-01T00:59:59-04:00': 'outside_hours',
      '2026-11-01T01:30:00-04:00': null,
      '2026-11-01T01:30:00-05:00': null,
      '2026-11-01T02:00:00-05:00': 'outside_hours',
    });
  });
});

describe('start, openings, and the order of refusals', () => {
  const startsAt = new Date('2026-12-07T08:00:00+01:00');

  it('refuses before the start, from the start on allows', async () => {
    expect(await refusalAt('2026-12-07T07:59:59+01:00', { shape: { startsAt } })).toBe('not_started');
    expect(await refusalAt('2026-12-07T08:00:00+01:00', { shape: { startsAt } })).toBeNull();
  });

  it('allows until the openings are used, then refuses', async () => {
    const at = '2026-12-07T10:00:00+01:00';
    expect(await refusalAt(at, { shape: { openings: 5 }, used: 0 })).toBeNull();
    expect(await refusalAt(at, { shape: { openings: 5 }, used: 4 })).toBeNull();
    expect(await refusalAt(at, { shape: { openings: 5 }, used: 5 })).toBe('openings_used');
    expect(await refusalAt(at, { shape: { openings: 1 }, used: 1 })).toBe('openings_used');
    expect(await refusalAt(at, { shape: { openings: 5 }, used: 7 })).toBe('openings_used');
  });

  it('says the first that applies: not started, then outside the hours, then openings used', async () => {
    const shape = { startsAt, windows: weekdayMornings, openings: 2 };
    // before the start, on a Saturday, with every opening used
    expect(await refusalAt('2026-12-05T10:00:00+01:00', { shape, used: 2 })).toBe('not_started');
    // started, on a Saturday, with every opening used
    expect(await refusalAt('2026-12-12T10:00:00+01:00', { shape, used: 2 })).toBe('outside_hours');
    // started, within the hours, with every opening used
    expect(await refusalAt('2026-12-09T10:00:00+01:00', { shape, used: 2 })).toBe('openings_used');
    expect(await refusalAt('2026-12-09T10:00:00+01:00', { shape, used: 1 })).toBeNull();
  });

  it('a null start, windows or count sets no limit', async () => {
    expect(await refusalAt('2000-01-01T03:00:00Z', { shape: NO_SHAPE, used: 1000 })).toBeNull();
    const { rows } = await sql<{ refusal: string | null }>`
      select grant_shape_refusal(null, null, ${BERLIN}::text, 3, null, now()) as refusal
    `.execute(database.db);
    // No count of openings given reads as none used.
    expect(rows[0]!.refusal).toBeNull();
  });
});

/**
 * An independent model of the rule: the wall clock of the zone as Intl reads it, and the windows held against
 * it in TypeScript.
 */
const ISO_WEEKDAY: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

const formats = new Map<string, Intl.DateTimeFormat>();

function wallClock(at: Date, zone: string): { day: number; second: number } {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, format);
  }
  const parts = format.formatToParts(at);
  const part = (type: string) => parts.find((each) => each.type === type)?.value ?? '';
  const second = Number(part('hour')) * 3600 + Number(part('minute')) * 60 + Number(part('second'));
  return { day: ISO_WEEKDAY[part('weekday')]!, second };
}

function modelAllows(windows: StoredWindow[], zone: string, at: Date): boolean {
  const { day, second } = wallClock(at, zone);
  const yesterday = day === 1 ? 7 : day - 1;
  return windows.some(({ days, from, to }) => {
    const [opens, closes] = [from * 60, to * 60];
    if (opens < closes) return days.includes(day) && second >= opens && second < closes;
    return (days.includes(day) && second >= opens) || (days.includes(yesterday) && second < closes);
  });
}

/** The SQL's answer at every 10 minutes of a week and the second before each, in one query. */
async function sweep(windows: StoredWindow[], zone: string, from: string, to: string) {
  const { rows } = await sql<{ ms: number; refusal: string | null }>`
    select (extract(epoch from probe.at) * 1000)::float8 as ms,
           grant_shape_refusal(null, ${JSON.stringify(windows)}::jsonb, ${zone}::text, null, 0, probe.at) as refusal
      from generate_series(${new Date(from)}::timestamptz, ${new Date(to)}::timestamptz, interval '10 minutes')
             as grid (at),
           lateral (values (grid.at), (grid.at - interval '1 second')) as probe (at)
  `.execute(database.db);
  return rows.map((row) => ({ at: new Date(Number(row.ms)), allowed: row.refusal === null }));
}

describe('the SQL agrees with an independent model at every 10 minutes of a week with a change of time', () => {
  const shapes: Record<string, GrantWindow[]> = {
    'weekday mornings': weekdayMornings,
    'weekend nights': [{ days: ['fri', 'sat', 'sun'], from: '22:00', to: '06:00' }],
    'the small hours of Sunday': [...sunday('01:00', '04:00'), ...sunday('02:10', '02:50')],
    'every day around 2': [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: '02:10', to: '02:50' },
      { days: ['sat'], from: '23:30', to: '02:30' },
    ],
  };
  const weeks = [
    { zone: BERLIN, from: '2026-10-21T00:00:00Z', to: '2026-10-28T00:00:00Z' },
    { zone: BERLIN, from: '2026-03-26T00:00:00Z', to: '2026-04-02T00:00:00Z' },
    { zone: NEW_YORK, from: '2026-03-05T00:00:00Z', to: '2026-03-12T00:00:00Z' },
    { zone: NEW_YORK, from: '2026-10-29T00:00:00Z', to: '2026-11-05T00:00:00Z' },
  ];
  for (const week of weeks) {
    it(`${week.zone}, the week from ${week.from.slice(0, 10)}`, async () => {
      for (const [name, windows] of Object.entries(shapes)) {
        const stored = storedWindows(windows);
        const found = await sweep(stored, week.zone, week.from, week.to);
        expect(found.length).toBe(2 * (7 * 24 * 6 + 1));
        const disagreements = found
          .filter(({ at, allowed }) => allowed !== modelAllows(stored, week.zone, at))
          .map(({ at, allowed }) => `${name} at ${at.toISOString()}: SQL ${allowed ? 'allows' : 'refuses'}`);
        expect(disagreements).toEqual([]);
        // Each shape allows somewhere and refuses somewhere, so agreement says something.
        expect(new Set(found.map((each) => each.allowed))).toEqual(new Set([true, false]));
      }
    });
  }
});
