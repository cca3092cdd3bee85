import { offsetMs } from './wall-clock.js';

/**
 * How far a zone is ahead of UTC at an instant, for many instants (docs/design.md section 10.1): a journal page
 * or export reads thousands, and Intl takes microseconds each. A zone's offset is kept per quarter hour of UTC,
 * read at both ends: offsets change on quarter hours, and a quarter whose ends disagree holds a change, so its
 * instants are read one by one. The quarters kept are bounded.
 */
const QUARTER_MS = 15 * 60 * 1000;
const offsets = new Map<string, number | null>();

export function offsetAt(time: number, zone: string): number {
  if (zone === 'UTC') return 0;
  const quarter = Math.floor(time / QUARTER_MS);
  const key = `${zone} ${quarter}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    const start = offsetMs(new Date(quarter * QUARTER_MS), zone);
    const end = offsetMs(new Date((quarter + 1) * QUARTER_MS - 1000), zone);
    offset = start === end ? start : null;
    if (offsets.size >= 4096) offsets.clear();
    offsets.set(key, offset);
  }
  return offset ?? offsetMs(new Date(time), zone);
}

/** The instant's wall-clock fields in `zone`, as a Date whose UTC fields read them (for formatting only). */
export function wallDate(date: Date, zone: string): Date {
  return new Date(date.getTime() + offsetAt(date.getTime(), zone));
}
