import type { GrantWindow } from '../../../shared/company-api/grant-shape.js';
import { isoWeekday, type KeyShape, MINUTES_PER_DAY, minuteOfDay } from './stored-shape.js';

/**
 * A customer grants what a company proposed, or less (docs/design.md section 3.1). These are the ways a granted
 * shape would be wider than the proposal, in words for the customer; none means the grant stays within it.
 * Nothing asked sets no bound: a proposal without windows allows any hour, without openings any number, without
 * a start or an end none.
 */
export function widerParts(granted: KeyShape, proposed: KeyShape): string[] {
  return [
    widerHours(granted.windows, proposed.windows),
    earlierStart(granted.startsAt, proposed.startsAt),
    laterEnd(granted.endsAt, proposed.endsAt),
    moreOpenings(granted.openings, proposed.openings),
  ].filter((part): part is string => part !== null);
}

const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;

/**
 * The minutes of the week (Monday 0:00 is 0) the windows hold. A window crossing midnight runs into the next
 * day, and Sunday's into Monday's.
 */
export function minutesOfWeek(windows: GrantWindow[]): Uint8Array {
  const held = new Uint8Array(MINUTES_PER_WEEK);
  for (const window of windows) {
    const from = minuteOfDay(window.from);
    const to = minuteOfDay(window.to);
    const length = from < to ? to - from : MINUTES_PER_DAY - from + to;
    for (const day of window.days) {
      const start = (isoWeekday(day) - 1) * MINUTES_PER_DAY + from;
      for (let minute = 0; minute < length; minute++) held[(start + minute) % MINUTES_PER_WEEK] = 1;
    }
  }
  return held;
}

function widerHours(granted: GrantWindow[] | null, proposed: GrantWindow[] | null): string | null {
  if (proposed === null) return null;
  if (granted === null) return 'any hour, where hours were asked for';
  const asked = minutesOfWeek(proposed);
  const given = minutesOfWeek(granted);
  return given.some((held, minute) => held === 1 && asked[minute] === 0)
    ? 'hours outside those asked for'
    : null;
}

function earlierStart(granted: Date | null, proposed: Date | null): string | null {
  if (proposed === null) return null;
  if (granted === null) return 'no start, where a start was asked for';
  return granted < proposed ? 'a start before the one asked for' : null;
}

function laterEnd(granted: Date | null, proposed: Date | null): string | null {
  if (proposed === null) return null;
  if (granted === null) return 'no end, where an end was asked for';
  return granted > proposed ? 'an end after the one asked for' : null;
}

function moreOpenings(granted: number | null, proposed: number | null): string | null {
  if (proposed === null) return null;
  if (granted === null) {
    return `no limit on openings, where ${proposed === 1 ? 'one was' : `${proposed} were`} asked for`;
  }
  return granted > proposed ? 'more openings than asked for' : null;
}
