import { type RawBuilder, sql } from 'kysely';

/**
 * Quiet hours (docs/design.md section 10.7): a span of the day, per barrier and person, in which nothing of the
 * barrier reaches them by push or by an e-mail of each entry. The journal and the daily digest still have every
 * entry. Times are 'HH:MM' in the person's own account zone (`customers.time_zone`, UTC when none), and the span
 * may cross midnight (22:00 until 07:00); it starts at `from` and ends just before `until`.
 */
export interface QuietHours {
  from: string;
  until: string;
}

/** A time of day as `<input type="time">` sends it without seconds. */
export const QUIET_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * Whether the instant `at` falls within `from`..`until` read in `zone`, as SQL over the columns named: false
 * when there are no quiet hours. The moment that counts is the entry's, not the fan-out's: an entry told late
 * is judged by when it happened. 'HH:MM' texts compare as times in the C collation.
 */
export function inQuietHours(columns: {
  at: string;
  zone: string;
  from: string;
  until: string;
}): RawBuilder<boolean> {
  const from = sql`${sql.ref(columns.from)} collate "C"`;
  const until = sql`${sql.ref(columns.until)} collate "C"`;
  const local = sql`to_char(${sql.ref(columns.at)} at time zone coalesce(${sql.ref(columns.zone)}, 'UTC'), 'HH24:MI') collate "C"`;
  return sql<boolean>`(${sql.ref(columns.from)} is not null and case
      when ${from} < ${until} then ${local} >= ${from} and ${local} < ${until}
      else ${local} >= ${from} or ${local} < ${until} end)`;
}
