import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { ScalarResult, SqlType } from '../../foundation/db/function-result.js';
import { dayText, momentText } from '../../foundation/web/readable-time.js';

/**
 * A key's lifetime as a customer chooses it (docs/design.md section 10.3): until they withdraw it, or until a
 * date. A date means the whole of that day in UTC: the key ends at the following midnight UTC, which is what
 * `status` shows as `key_expires_at`. UTC because every time the company API shows is UTC, and because the
 * browser's form gives a day without a place: the page says "end of the day, UTC" next to the field.
 */
const DAY_MS = 24 * 3600 * 1000;
/** Further ahead than anyone plans a courier's access; "until you withdraw it" covers the rest. */
export const LONGEST_DATED_KEY_YEARS = 10;

export type DatedEnd = { ok: true; expiresAt: Date } | { ok: false; problem: string };

/** The end of a key that lasts until `day` (`YYYY-MM-DD`), or what is wrong with the day. */
export function endOfDayUtc(day: string, now: Date): DatedEnd {
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
  const expiresAt = new Date(start + DAY_MS);
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

/** The day a key set by endOfDayUtc lasts until, or null for an end at another time of day. */
export function lastDayOf(expiresAt: Date): Date | null {
  if (expiresAt.getTime() % DAY_MS !== 0) return null;
  return new Date(expiresAt.getTime() - DAY_MS);
}

/** Today in UTC as `YYYY-MM-DD`: the earliest day the form offers. */
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * How long a key lasts, in words, for a reader in `zone`: "until you withdraw it", "until the end of 30 Nov
 * 2026 (UTC)" for a key granted until a day (the day is a UTC day, so a reader elsewhere is also told when that
 * is for them: ", that is 1 Dec 2026, 01:00 (Europe/Berlin)"), or the exact moment for one that ends at another
 * time.
 */
export function lifetimeText(expiresAt: Date | null, zone = 'UTC'): string {
  if (expiresAt === null) return 'until you withdraw it';
  const lastDay = lastDayOf(expiresAt);
  if (!lastDay) return `until ${momentText(expiresAt, zone)}`;
  const local = zone === 'UTC' ? '' : `, that is ${momentText(expiresAt, zone)}`;
  return `until the end of ${dayText(lastDay)} (UTC)${local}`;
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
