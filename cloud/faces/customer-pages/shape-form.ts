import {
  type GrantWindow,
  grantWindowSchema,
  WEEKDAYS,
  type Weekday,
} from '../../../shared/company-api/grant-shape.js';
import { ASK_FIRST_DEFAULT_SECONDS } from '../../../shared/limits.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { listField, textField } from '../../foundation/web/form-input.js';
import { instantOf, wallClockOf } from '../../foundation/zones/wall-clock.js';
import type { KeyShape } from '../../rules/grant-shapes/stored-shape.js';

/**
 * The shape of a grant as the customer's form carries it (docs/design.md sections 3.1 and 10.3): when in the week
 * the company may open, from when, and how many times. One reading for the consent form and for the barrier
 * page's change of a key's shape, so the two never disagree. Times are typed and shown in the barrier's zone;
 * what is stored is the instant (a start) and the wall-clock hours (windows).
 */

/** Rows of windows the form offers: the proposal's or the key's, one empty row more, and at least three. */
export const WINDOW_ROWS = { least: 3, most: 8 } as const;

export interface ShapeChoices {
  hours: 'any' | 'windows';
  /** One per row on the form, as typed; an empty row is one with no day ticked and no time typed. */
  windows: { days: Weekday[]; from: string; to: string }[];
  start: 'now' | 'later';
  /** `YYYY-MM-DD` and `HH:MM` in the barrier's zone, as typed. */
  startDay: string;
  startTime: string;
  openings: 'any' | 'one' | 'count';
  openingsCount: string;
  /** "Ask me before each opening" (docs/design.md section 10.8), and how long an opening waits, as posted. */
  ask: 'no' | 'yes';
  askSeconds: string;
}

/** The waits the form offers for an answer, in seconds; ASK_FIRST_DEFAULT_SECONDS is chosen first. */
export const ASK_WAITS = [30, 60, 120] as const;

/**
 * The shape's parts the form decides, and whether each opening asks first (not part of the company API's shape:
 * a company proposes hours and openings, never that the customer be asked); its end is the form's lifetime.
 */
export type FormShape = Pick<KeyShape, 'startsAt' | 'windows' | 'openings'> & { askFirstS: number | null };

/**
 * The form filled from a shape: the company's proposal on the consent form, or the key's own when changed, with
 * the key's wait for an answer (null: it does not ask).
 */
export function choicesOf(
  shape: Pick<KeyShape, 'startsAt' | 'windows' | 'openings'> | null,
  zone: string,
  askFirstS: number | null = null,
): ShapeChoices {
  const windows = (shape?.windows ?? []).map((window) => ({ ...window, days: [...window.days] }));
  const start = shape?.startsAt ? wallClockOf(shape.startsAt, zone) : null;
  const openings = shape?.openings ?? null;
  return {
    hours: windows.length > 0 ? 'windows' : 'any',
    windows: padded(windows),
    start: start ? 'later' : 'now',
    startDay: start?.day ?? '',
    startTime: start?.time ?? '',
    openings: openings === null ? 'any' : openings === 1 ? 'one' : 'count',
    openingsCount: openings !== null && openings > 1 ? String(openings) : '',
    ask: askFirstS === null ? 'no' : 'yes',
    askSeconds: String(askFirstS ?? ASK_FIRST_DEFAULT_SECONDS),
  };
}

function padded(rows: ShapeChoices['windows']): ShapeChoices['windows'] {
  const count = Math.min(WINDOW_ROWS.most, Math.max(WINDOW_ROWS.least, rows.length + 1));
  const empty = () => ({ days: [] as Weekday[], from: '', to: '' });
  return [...rows, ...Array.from({ length: Math.max(0, count - rows.length) }, empty)];
}

export type ShapeReading =
  | { ok: true; choices: ShapeChoices; shape: FormShape }
  | { ok: false; choices: ShapeChoices; errors: FieldErrors };

/**
 * The posted fields read into a shape, or every problem, keyed by the fieldset's id (`hours`, `start`,
 * `openings`). `now` refuses a start in the past, which would say "later" and mean "now".
 */
export function readShapeForm(body: unknown, zone: string, now: Date): ShapeReading {
  const choices = postedChoices(body);
  const errors: FieldErrors = {};
  const windows = readWindows(choices, errors);
  const startsAt = readStart(choices, zone, now, errors);
  const openings = readOpenings(choices, errors);
  const askFirstS = readAsk(choices, errors);
  if (Object.keys(errors).length > 0) return { ok: false, choices, errors };
  return { ok: true, choices, shape: { windows, startsAt, openings, askFirstS } };
}

function postedChoices(body: unknown): ShapeChoices {
  const rows: ShapeChoices['windows'] = [];
  for (let row = 0; row < WINDOW_ROWS.most; row++) {
    const days = listField(body, `w${row}_days`).filter((day): day is Weekday =>
      (WEEKDAYS as readonly string[]).includes(day),
    );
    const from = textField(body, `w${row}_from`).trim().slice(0, 10);
    const to = textField(body, `w${row}_to`).trim().slice(0, 10);
    if (days.length > 0 || from || to) rows.push({ days, from, to });
  }
  const openings = textField(body, 'openings');
  return {
    hours: textField(body, 'hours') === 'windows' ? 'windows' : 'any',
    windows: padded(rows),
    start: textField(body, 'start') === 'later' ? 'later' : 'now',
    startDay: textField(body, 'start_day').trim().slice(0, 20),
    startTime: textField(body, 'start_time').trim().slice(0, 10),
    openings: openings === 'one' || openings === 'count' ? openings : 'any',
    openingsCount: textField(body, 'openings_count').trim().slice(0, 10),
    ask: textField(body, 'ask') === 'yes' ? 'yes' : 'no',
    askSeconds: textField(body, 'ask_seconds').trim().slice(0, 10),
  };
}

/** "8:00", "08:00" and "8.00" are the same time to a person; the stored form wants "08:00". */
function clockTime(typed: string): string {
  const match = /^(\d{1,2})[:.](\d{2})$/.exec(typed);
  return match ? `${match[1]!.padStart(2, '0')}:${match[2]}` : typed;
}

function readWindows(choices: ShapeChoices, errors: FieldErrors): GrantWindow[] | null {
  if (choices.hours === 'any') return null;
  const filled = choices.windows.filter((row) => row.days.length > 0 || row.from || row.to);
  if (filled.length === 0) {
    errors.hours = 'Tick the days and give the hours of at least one window, or choose "At any time".';
    return null;
  }
  const windows: GrantWindow[] = [];
  for (const [index, row] of filled.entries()) {
    const parsed = grantWindowSchema.safeParse({
      days: row.days,
      from: clockTime(row.from),
      to: clockTime(row.to),
    });
    if (!parsed.success) {
      errors.hours = `Window ${index + 1}: ${windowProblem(row)}`;
      return null;
    }
    windows.push(parsed.data);
  }
  return windows;
}

/** What is wrong with a row, in the form's own words rather than the API's field names. */
function windowProblem(row: ShapeChoices['windows'][number]): string {
  if (row.days.length === 0) return 'tick at least one day.';
  const from = clockTime(row.from);
  const to = clockTime(row.to);
  const time = /^([01]\d|2[0-3]):[0-5]\d$/;
  if (!time.test(from)) return 'give the time it starts as hours and minutes, such as 08:00.';
  if (!time.test(to) && to !== '24:00') return 'give the time it ends as hours and minutes, such as 12:00.';
  if (from === to) return 'it starts and ends at the same time: give a window of some length.';
  return 'check its days and times.';
}

function readStart(choices: ShapeChoices, zone: string, now: Date, errors: FieldErrors): Date | null {
  if (choices.start === 'now') return null;
  const startsAt = instantOf({ day: choices.startDay, time: clockTime(choices.startTime) }, zone);
  if (!startsAt) {
    errors.start = 'Give the day as a date and the time as hours and minutes, such as 08:00.';
    return null;
  }
  if (startsAt <= now) {
    errors.start = 'The start must be later than now, or choose "From now".';
    return null;
  }
  return startsAt;
}

function readOpenings(choices: ShapeChoices, errors: FieldErrors): number | null {
  if (choices.openings === 'any') return null;
  if (choices.openings === 'one') return 1;
  const count = /^\d{1,4}$/.test(choices.openingsCount) ? Number(choices.openingsCount) : Number.NaN;
  if (!(count >= 1 && count <= 1000)) {
    errors.openings = 'Give the number of openings as a whole number from 1 to 1000.';
    return null;
  }
  return count;
}

function readAsk(choices: ShapeChoices, errors: FieldErrors): number | null {
  if (choices.ask === 'no') return null;
  const seconds = ASK_WAITS.find((wait) => String(wait) === choices.askSeconds);
  if (seconds === undefined) {
    errors.ask = `Choose how long an opening waits for your answer: ${ASK_WAITS.join(', ')} seconds.`;
    return null;
  }
  return seconds;
}
