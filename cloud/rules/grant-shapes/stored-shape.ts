import { z } from 'zod';
import {
  type GrantShape,
  type GrantWindow,
  timestampInstant,
  WEEKDAYS,
} from '../../../shared/company-api/grant-shape.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';

/**
 * A grant's shape as the cloud holds it (docs/design.md section 3.1). `keys.windows` is the form that
 * grant_shape_refusal (./grant-shape-refusal.sql) reads in every `open`: ISO weekdays (1 = Monday .. 7 = Sunday,
 * sorted) and minutes of the day, `[{"days":[1,5],"from":480,"to":720}]`, so that the SQL compares numbers and
 * parses no text. The company API's form is shared/company-api/grant-shape.ts; this file turns one into the other.
 */
export interface StoredWindow {
  /** ISO weekdays the window starts on, sorted. */
  days: number[];
  /** Minute of the day it opens, 0..1439. */
  from: number;
  /** Minute of the day it closes, 1..1440; below `from`, on the next day. */
  to: number;
}

/** A key's whole shape; null fields set no limit. */
export interface KeyShape {
  startsAt: Date | null;
  endsAt: Date | null;
  windows: GrantWindow[] | null;
  openings: number | null;
}

export const MINUTES_PER_DAY = 1440;

/** What a row must hold: read back with a check, so that a bad row is an error and never a wrong answer. */
const storedWindowsSchema = z
  .array(
    z
      .strictObject({
        days: z.array(z.int().min(1).max(7)).min(1).max(7),
        from: z
          .int()
          .min(0)
          .max(MINUTES_PER_DAY - 1),
        to: z.int().min(1).max(MINUTES_PER_DAY),
      })
      .refine((window) => window.from !== window.to, 'a window of zero length')
      .refine((window) => new Set(window.days).size === window.days.length, 'a weekday named twice'),
  )
  .min(1);

/** Minutes of the day of `HH:MM`; `24:00` is 1440. */
export function minuteOfDay(time: string): number {
  const [hours, minutes] = time.split(':').map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
}

/** `HH:MM` of a minute of the day; 1440 is `24:00`. */
export function timeOfDay(minute: number): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(Math.floor(minute / 60))}:${pad(minute % 60)}`;
}

/** ISO weekday of an API weekday: mon is 1, sun is 7. */
export function isoWeekday(day: GrantWindow['days'][number]): number {
  return WEEKDAYS.indexOf(day) + 1;
}

export function storedWindows(windows: GrantWindow[]): StoredWindow[] {
  return windows.map((window) => ({
    days: window.days.map(isoWeekday).sort((a, b) => a - b),
    from: minuteOfDay(window.from),
    to: minuteOfDay(window.to),
  }));
}

/** The API's windows of a stored value; throws when the value is not what storedWindows writes. */
export function apiWindows(stored: unknown): GrantWindow[] {
  const parsed = storedWindowsSchema.safeParse(typeof stored === 'string' ? JSON.parse(stored) : stored);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`stored windows are not valid at [${issue.path.join('].[')}]: ${issue.message}`);
  }
  return parsed.data.map((window) => ({
    days: [...window.days].sort((a, b) => a - b).map((day) => WEEKDAYS[day - 1]!),
    from: timeOfDay(window.from),
    to: timeOfDay(window.to),
  }));
}

/** The instant of a validated shape's timestamp. */
function instantOf(text: string): Date {
  const instant = timestampInstant(text);
  if (!instant) throw new Error(`not a time: ${text}`);
  return instant;
}

/** The cloud's form of a shape the company API carried (validated by grantShapeSchema). */
export function keyShapeOf(shape: GrantShape): KeyShape {
  return {
    startsAt: shape.starts_at === undefined ? null : instantOf(shape.starts_at),
    endsAt: shape.ends_at === undefined ? null : instantOf(shape.ends_at),
    windows: shape.windows ?? null,
    openings: shape.openings ?? null,
  };
}

/** The company API's form of a key's shape: a field without a value is left out. */
export function grantShapeOf(key: KeyShape): GrantShape {
  return {
    ...(key.windows ? { windows: key.windows } : {}),
    ...(key.startsAt ? { starts_at: formatTimestamp(key.startsAt) } : {}),
    ...(key.endsAt ? { ends_at: formatTimestamp(key.endsAt) } : {}),
    ...(key.openings !== null ? { openings: key.openings } : {}),
  };
}
