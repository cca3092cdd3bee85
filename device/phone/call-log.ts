import { z } from 'zod';
import type { CallResult } from '../drivers/driver.js';

/**
 * The phone's call log as `termux-call-log -l <n>` prints it (CallLogAPI.java, termux/termux-api): a JSON
 * array of the newest `n` calls, oldest first, each `{"name", "phone_number", "type", "date", "duration",
 * "sim_id"}`. `type` is OUTGOING, INCOMING, MISSED, REJECTED, BLOCKED, VOICEMAIL or UNKNOWN_TYPE; `date` is
 * when the call started, `yyyy-MM-dd HH:mm:ss` in the phone's time zone; `duration` is the time it was
 * connected, `mm:ss` or `hh:mm:ss`. Android writes a call into the log once it has ended.
 *
 * What it cannot say: for a call we made, REJECTED never appears (that type is for incoming calls the phone's
 * owner turned down). A module that rejects our call, one that is busy and one that lets it ring out all leave
 * OUTGOING with duration 00:00, so they read alike: `unanswered`.
 */
export const callLogEntrySchema = z.object({
  phone_number: z.string().max(64).nullable(),
  type: z.string().max(32),
  date: z.string().max(32),
  duration: z.string().regex(/^(\d{1,3}:)?\d{2}:\d{2}$/),
});
export type CallLogEntry = z.infer<typeof callLogEntrySchema>;

export const callLogSchema = z.array(callLogEntrySchema).max(100);

/** How many of the newest calls are read: enough that our call is among them when it shows. */
export const CALL_LOG_LIMIT = 5;

/** An entry's identity across two readings of the log: the same call reads the same. */
export function entryKey(entry: CallLogEntry): string {
  return `${entry.date}|${entry.phone_number ?? ''}|${entry.type}|${entry.duration}`;
}

/**
 * Our call in a reading taken after dialling: an OUTGOING entry to the gate's number that the reading before
 * dialling did not have.
 */
export function newCallTo(
  number: string,
  before: ReadonlySet<string>,
  after: readonly CallLogEntry[],
): CallLogEntry | null {
  const found = after.filter(
    (entry) =>
      entry.type === 'OUTGOING' && !before.has(entryKey(entry)) && sameNumber(entry.phone_number, number),
  );
  return found.at(-1) ?? null;
}

/** The call's end as the log shows it: connected for any time at all means the module picked up. */
export function callResultOf(entry: CallLogEntry): CallResult {
  return durationSeconds(entry.duration) > 0 ? 'answered' : 'unanswered';
}

function durationSeconds(duration: string): number {
  return duration.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/**
 * The dialler may log the number as dialled or in another form (+49 170... against 0170...): the digits are
 * compared from the end, at least the subscriber's part.
 */
function sameNumber(logged: string | null, dialled: string): boolean {
  if (logged === null) return false;
  const a = logged.replace(/\D/g, '').replace(/^0+/, '');
  const b = dialled.replace(/\D/g, '').replace(/^0+/, '');
  const shorter = Math.min(a.length, b.length);
  return shorter >= 6 ? a.slice(-shorter) === b.slice(-shorter) : a === b;
}
