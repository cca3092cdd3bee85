import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { ScalarResult, SqlType } from '../../foundation/db/function-result.js';
import { dayText, momentText } from '../../foundation/web/readable-time.js';

import { instantOf, wallClockOf } from '../../foundation/zones/wall-clock.js';

/**
 * A key's lifetime as a customer chooses it (docs/design.md section 10.3): until they withdraw it, or until a
 * date. A date means the whole of that day where the barrier is: the key ends at the following midnight in the
 * barrier's time zone (section 3.1), which `status` shows in UTC as `key_expires_at`. The barrier's zone, not the
 * reader's, because that is where the gate is and where its hours are read: "until Friday" for a cleaner means
 * Friday at that house, whoever grants it and wherever they are. The page names the zone beside the field.
 */
const DAY_MS = 24 * 3600 * 1000;
/** Further ahead than anyone plans a courier's access; "until you withdraw it" covers the rest. */
export const LONGEST_DATED_KEY_YEARS = 10;

export type DatedEnd = { ok: true; expiresAt: Date } | { ok: false; problem: string };

/** The end of a key that lasts until `day` (`YYYY-MM-DD`) in `zone`, or what is wrong with the day. */
export function endOfDay(day: string, now: Date, zone: string): DatedEnd {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return { ok: false, problem: 'Give the last day as a date, such as 2026-11-30.' };
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const start = Date.UTC(year, month - 1, date);
  const parsed = new Date(start);
  if (
    parsed.getUTCFullYear() !== year ||
    parsed.getUTCMonth() !== month - 1 ||
    parsed.getUTCDate() !== date
  ) {
    return { ok: false, problem: 'That day does not exist in the calendar; check the date.' };
  }
  const nextDay = new Date(start + DAY_MS).toISOString().slice(0, 10);
  // A midnight that clocks skip (a few zones change at 00:00) is read past the gap, as wall-clock.ts does.
  const expiresAt = instantOf({ day: nextDay, time: '00:00' }, zone) ?? new Date(start + DAY_MS);
  if (expiresAt <= now) return { ok: false, problem: 'The last day must be today or later.' };
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + LONGEST_DATED_KEY_YEARS);
  if (expiresAt > latest) {
    return {
      ok: false,
      problem: `Choose a day within ${LONGEST_DATED_KEY_YEARS} years, or "until I withdraw it".`,
    };
  }
  return { ok: true, expiresAt };
}

/**
 * The day a key set by endOfDay in `zone` lasts until (as a UTC midnight naming that calendar day), or null for
 * an end at another time of day there: a key granted before the barrier's zone changed reads as its exact end.
 */
export function lastDayOf(expiresAt: Date, zone: string): Date | null {
  if (expiresAt.getTime() % 60_000 !== 0) return null;
  const wall = wallClockOf(expiresAt, zone);
  if (wall.time !== '00:00') return null;
  return new Date(Date.parse(`${wall.day}T00:00:00Z`) - DAY_MS);
}

/** Today in `zone` as `YYYY-MM-DD`: the earliest day the form offers. */
export function todayIn(now: Date, zone: string): string {
  return wallClockOf(now, zone).day;
}

/**
 * How long a key lasts, in words, for a reader in `readerZone`: "until you withdraw it", "until the end of 30
 * Nov 2026 (Europe/Berlin)" for a key granted until a day in the barrier's zone (a reader elsewhere is also
 * told when that is for them: ", that is 30 Nov 2026, 18:00 (America/New_York)"), or the exact moment for one
 * that ends at another time.
 */
export function lifetimeText(expiresAt: Date | null, readerZone = 'UTC', barrierZone = 'UTC'): string {
  if (expiresAt === null) return 'until you withdraw it';
  const lastDay = lastDayOf(expiresAt, barrierZone);
  if (!lastDay) return `until ${momentText(expiresAt, readerZone)}`;
  const local = readerZone === barrierZone ? '' : `, that is ${momentText(expiresAt, readerZone)}`;
  return `until the end of ${dayText(lastDay)} (${barrierZone})${local}`;
}

/** Why an access key no longer opens, as far as its lifetime goes; null while it is still valid. */
export type AccessKeyLapse = 'revoked' | 'expired';

/**
 * What access_key_lapse returns (`returns text` in ./access-key-lapse.sql, the one place that says whether a key is still
 * valid), declared here once; a test compares it with the database's catalog.
 */
export const accessKeyLapseResult = {
  function: 'access_key_lapse',
  returns: 'text',
} as const satisfies ScalarResult<SqlType>;

/** access_key_lapse of the `keys` row in the query at `now`: 'revoked', 'expired', or null for a valid key. */
export function accessKeyLapse(now: Date): RawBuilder<AccessKeyLapse | null> {
  return sql<AccessKeyLapse | null>`access_key_lapse(${sql.ref('keys.revoked_at')}, ${sql.ref('keys.expires_at')}, ${now}::timestamptz)`;
}

/** The condition that the `keys` row in the query is still valid at `now`: neither withdrawn nor past its end. */
export function accessKeyStillValid(now: Date): RawBuilder<SqlBool> {
  return sql<SqlBool>`${accessKeyLapse(now)} is null`;
}
