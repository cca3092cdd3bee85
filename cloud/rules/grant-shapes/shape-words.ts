import type { GrantWindow, Weekday } from '../../../shared/company-api/grant-shape.js';
import type { GrantShapeRefusal } from './grant-shape-refusal.js';
import { isoWeekday, type KeyShape, MINUTES_PER_DAY, minuteOfDay } from './stored-shape.js';

/**
 * A grant's shape in words for a person (docs/design.md section 3.1), in the barrier's time zone, where its
 * hours are read: "Mondays to Fridays, 8:00 to 12:00", "from Monday 7 December 2026, 8:00", "5 openings in all".
 */

/** Each weekday's name, as the forms label their boxes and the words say them. */
export const DAY_NAMES: Record<Weekday, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

/** Runs of weekdays that follow each other, in the week's order: [mon, tue, wed], [fri]. */
function runsOf(days: readonly Weekday[]): Weekday[][] {
  const sorted = [...days].sort((a, b) => isoWeekday(a) - isoWeekday(b));
  const runs: Weekday[][] = [];
  for (const day of sorted) {
    const run = runs.at(-1);
    const last = run?.at(-1);
    if (run && last && isoWeekday(day) === isoWeekday(last) + 1) run.push(day);
    else runs.push([day]);
  }
  return runs;
}

/** "a, b and c". */
function listed(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** "Every day", "Mondays to Fridays", "Mondays and Thursdays", "Mondays to Wednesdays and Saturdays". */
export function daysWords(days: readonly Weekday[]): string {
  if (new Set(days).size === 7) return 'Every day';
  const plural = (day: Weekday) => `${DAY_NAMES[day]}s`;
  const parts = runsOf(days).flatMap((run) =>
    run.length > 2 ? [`${plural(run[0]!)} to ${plural(run.at(-1)!)}`] : run.map(plural),
  );
  return listed(parts);
}

/** "8:00", "midnight". */
function clockWords(minute: number): string {
  if (minute === 0 || minute === MINUTES_PER_DAY) return 'midnight';
  return `${Math.floor(minute / 60)}:${String(minute % 60).padStart(2, '0')}`;
}

/** "Mondays to Fridays, 8:00 to 12:00"; "Mondays and Thursdays, 22:00 to 6:00 the next morning". */
export function windowWords(window: GrantWindow): string {
  const from = minuteOfDay(window.from);
  const to = minuteOfDay(window.to);
  const days = daysWords(window.days);
  if (from === 0 && to === MINUTES_PER_DAY) return `${days}, all day`;
  if (from < to) return `${days}, ${clockWords(from)} to ${clockWords(to)}`;
  const next = to <= MINUTES_PER_DAY / 2 ? 'the next morning' : 'the next day';
  return `${days}, ${clockWords(from)} to ${clockWords(to)} ${next}`;
}

/** "Monday 7 December 2026, 8:00" in `zone`; "(Europe/Berlin)" after it when `withZone`. */
export function momentWords(at: Date, zone: string, withZone = false): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((each) => each.type === type)?.value ?? '';
  const moment = `${part('weekday')} ${part('day')} ${part('month')} ${part('year')}, ${Number(part('hour'))}:${part('minute')}`;
  return withZone ? `${moment} (${zone})` : moment;
}

export function startWords(startsAt: Date, zone: string, withZone = false): string {
  return `from ${momentWords(startsAt, zone, withZone)}`;
}

export function endWords(endsAt: Date, zone: string, withZone = false): string {
  return `until ${momentWords(endsAt, zone, withZone)}`;
}

/** "one opening", "5 openings in all", with "(2 used)" when the count so far is given. */
export function openingsWords(allowed: number, used?: number): string {
  const count = allowed === 1 ? 'one opening' : `${allowed} openings in all`;
  return used === undefined ? count : `${count} (${used} used)`;
}

/** The shape, one phrase per part: its windows, start, end and openings; none for a shape that sets no limit. */
export function shapeWords(
  shape: KeyShape,
  zone: string,
  options: { used?: number; withZone?: boolean } = {},
): string[] {
  return [
    ...(shape.windows ?? []).map(windowWords),
    ...(shape.startsAt ? [startWords(shape.startsAt, zone, options.withZone)] : []),
    ...(shape.endsAt ? [endWords(shape.endsAt, zone, options.withZone)] : []),
    ...(shape.openings !== null ? [openingsWords(shape.openings, options.used)] : []),
  ];
}

/** Why an opening was refused, for the customer's journal: "refused before the start you set". */
export const REFUSAL_WORDS: Record<GrantShapeRefusal, string> = {
  not_started: 'before the start you set',
  outside_hours: 'outside the hours you allowed',
  openings_used: 'after all the openings you allowed were used',
};
