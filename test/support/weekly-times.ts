import { wallClockOf } from '../../cloud/foundation/zones/wall-clock.js';

/**
 * Times of the week in a zone for the grant-shape suites (docs/design.md section 3.1). Their clocks run ahead of
 * the real time, since a real controller refuses a command already past its end on its own clock, so they count
 * from "now" rather than from a fixed date.
 */
const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** The first Monday, `hour`:00 on `zone`'s own calendar (winter or summer time), at least `daysAhead` from now. */
export function mondayAhead(zone: string, hour: number, daysAhead: number): Date {
  const time = `${String(hour).padStart(2, '0')}:00`;
  let candidate = new Date(Math.ceil((Date.now() + daysAhead * DAY) / HOUR) * HOUR);
  for (;;) {
    const wall = wallClockOf(candidate, zone);
    if (new Date(`${wall.day}T00:00:00Z`).getUTCDay() === 1 && wall.time === time) return candidate;
    candidate = new Date(candidate.getTime() + HOUR);
  }
}

/** `YYYY-MM-DD HH:MM:SS`, the company API's form of a time. */
export const apiTime = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
