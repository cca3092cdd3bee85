import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type GrantShape,
  type GrantWindow,
  grantShapeSchema,
  timestampInstant,
} from '../../shared/company-api/grant-shape.js';

/**
 * The shape of a grant as the company API carries it (shared/company-api/grant-shape.ts; docs/design.md section
 * 3.1), read as `request` reads it: the body's `shape`. Every refusal names its field, so that the company's
 * program learns which one to fix.
 */
const body = z.looseObject({ shape: grantShapeSchema });

/** The problems with a shape: each as the field it names and its message. */
function problems(shape: unknown): { path: string; message: string }[] {
  const result = body.safeParse({ shape });
  if (result.success) return [];
  return result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

function firstProblem(shape: unknown): string {
  return problems(shape)[0]?.message ?? 'no problem';
}

const weekdayMornings: GrantWindow = {
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  from: '08:00',
  to: '12:00',
};

describe('a good shape', () => {
  const good: GrantShape[] = [
    {},
    { windows: [weekdayMornings] },
    {
      windows: [
        { days: ['mon', 'thu'], from: '22:00', to: '06:00' },
        { days: ['sat', 'sun'], from: '00:00', to: '24:00' },
      ],
      starts_at: '2026-12-07 07:00:00',
      ends_at: '2026-12-19 17:00:00',
      openings: 5,
    },
    { openings: 1 },
    { openings: 1000 },
    { starts_at: '2026-12-07 07:00:00' },
    { ends_at: '2028-02-29 23:59:59' },
    { windows: Array.from({ length: 8 }, () => ({ days: ['sun' as const], from: '23:59', to: '00:01' })) },
  ];
  for (const shape of good) {
    it(`is taken as it is: ${JSON.stringify(shape)}`, () => {
      expect(problems(shape)).toEqual([]);
      expect(grantShapeSchema.parse(shape)).toEqual(shape);
    });
  }

  it('may end a window at 24:00, the midnight that ends the day', () => {
    expect(problems({ windows: [{ days: ['fri'], from: '20:00', to: '24:00' }] })).toEqual([]);
  });
});

describe('windows', () => {
  it('refuses a window of zero length, and says what to do', () => {
    expect(problems({ windows: [weekdayMornings, { days: ['sat'], from: '09:00', to: '09:00' }] })).toEqual([
      {
        path: 'shape.windows.1.to',
        message:
          'shape.windows[1].to equals from, a window of zero length: set to later than from, or earlier for one across midnight',
      },
    ]);
  });

  it('refuses from 24:00: a window starts within the day', () => {
    expect(problems({ windows: [{ days: ['mon'], from: '24:00', to: '06:00' }] })).toEqual([
      {
        path: 'shape.windows.0.from',
        message: 'shape.windows[0].from must be a time of day, "HH:MM" from 00:00 to 23:59',
      },
    ]);
  });

  it('refuses to 00:00, and points to 24:00', () => {
    expect(firstProblem({ windows: [{ days: ['mon'], from: '22:00', to: '00:00' }] })).toBe(
      'shape.windows[0].to must be a time of day, "HH:MM" from 00:01 to 24:00 (24:00 for the midnight that ends the day)',
    );
  });

  it('refuses times that are not HH:MM', () => {
    for (const time of ['8:00', '08:60', '25:00', '08:00:00', 'noon']) {
      expect(firstProblem({ windows: [{ days: ['mon'], from: time, to: '12:00' }] })).toMatch(
        /^shape\.windows\[0\]\.from must be a time of day/,
      );
    }
    expect(firstProblem({ windows: [{ days: ['mon'], from: '08:00', to: 1200 }] })).toBe(
      'shape.windows[0].to must be a time of day, "HH:MM"',
    );
  });

  it('refuses a day that is not a weekday, no days, and a day named twice', () => {
    expect(problems({ windows: [{ days: ['mon', 'monday'], from: '08:00', to: '12:00' }] })).toEqual([
      {
        path: 'shape.windows.0.days.1',
        message: 'shape.windows[0].days[1] must be one of mon, tue, wed, thu, fri, sat, sun',
      },
    ]);
    expect(firstProblem({ windows: [{ days: [], from: '08:00', to: '12:00' }] })).toBe(
      'shape.windows[0].days must name at least one weekday',
    );
    expect(firstProblem({ windows: [{ days: ['tue', 'wed', 'tue'], from: '08:00', to: '12:00' }] })).toBe(
      'shape.windows[0].days must name each weekday at most once',
    );
    expect(firstProblem({ windows: [{ days: 'mon', from: '08:00', to: '12:00' }] })).toBe(
      'shape.windows[0].days must be a list of weekdays, such as ["mon", "tue"]',
    );
  });

  it('refuses 9 windows and none', () => {
    const nine = Array.from({ length: 9 }, () => weekdayMornings);
    expect(problems({ windows: nine })).toEqual([
      { path: 'shape.windows', message: 'shape.windows must hold at most 8 windows' },
    ]);
    expect(firstProblem({ windows: [] })).toBe(
      'shape.windows must hold at least one window; leave it out for any hour',
    );
  });

  it('refuses an unknown field in a window, naming it', () => {
    expect(firstProblem({ windows: [{ ...weekdayMornings, until: '13:00' }] })).toBe(
      'shape.windows[0].until: no such field; a window has days, from, to',
    );
  });
});

describe('start, end and openings', () => {
  it('refuses a start after the end, or at it', () => {
    for (const starts_at of ['2026-12-19 17:00:01', '2026-12-19 17:00:00']) {
      expect(problems({ starts_at, ends_at: '2026-12-19 17:00:00' })).toEqual([
        { path: 'shape.ends_at', message: 'shape.starts_at must be before shape.ends_at' },
      ]);
    }
    // On its own, the shape names its fields from itself.
    expect(
      grantShapeSchema.safeParse({ starts_at: '2026-12-20 00:00:00', ends_at: '2026-12-19 17:00:00' }).error
        ?.issues[0]?.message,
    ).toBe('starts_at must be before ends_at');
  });

  it('refuses timestamps that are no real time, or not in the API form', () => {
    for (const text of [
      '2026-02-30 08:00:00',
      '2026-13-01 08:00:00',
      '2026-12-07 24:00:00',
      '2026-12-07 08:00:60',
    ]) {
      expect(problems({ starts_at: text })).toEqual([
        {
          path: 'shape.starts_at',
          message: 'shape.starts_at must be a real time, "YYYY-MM-DD HH:MM:SS" in UTC',
        },
      ]);
    }
    for (const text of ['2026-12-07T08:00:00Z', '2026-12-07 08:00', '7 December 2026']) {
      expect(firstProblem({ ends_at: text })).toBe(
        'shape.ends_at must be a time, "YYYY-MM-DD HH:MM:SS" in UTC',
      );
    }
    expect(firstProblem({ ends_at: 1765000000 })).toBe(
      'shape.ends_at must be a time, "YYYY-MM-DD HH:MM:SS" in UTC',
    );
  });

  it('reads a timestamp as the UTC instant it names', () => {
    expect(timestampInstant('2026-12-07 07:00:00')).toEqual(new Date('2026-12-07T07:00:00Z'));
    expect(timestampInstant('2028-02-29 00:00:00')).toEqual(new Date('2028-02-29T00:00:00Z'));
    expect(timestampInstant('2027-02-29 00:00:00')).toBeNull();
  });

  it('refuses openings of 0, 1001, and not whole', () => {
    for (const openings of [0, 1001, 2.5, '5', -1]) {
      expect(problems({ openings })).toEqual([
        { path: 'shape.openings', message: 'shape.openings must be an integer, 1..1000' },
      ]);
    }
  });
});

describe('the shape itself', () => {
  it('refuses an unknown field, so that a misspelt one never widens a grant', () => {
    expect(problems({ window: [weekdayMornings], opening: 5 })).toEqual([
      {
        path: 'shape',
        message:
          'shape.window, shape.opening: no such field; a shape has windows, starts_at, ends_at, openings',
      },
    ]);
  });

  it('refuses what is not an object', () => {
    for (const shape of ['mornings', [weekdayMornings], null, 5]) {
      expect(firstProblem(shape)).toBe(
        'shape must be a shape, an object of windows, starts_at, ends_at, openings',
      );
    }
  });
});
