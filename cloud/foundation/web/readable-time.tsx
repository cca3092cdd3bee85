import { createContext, type VNode } from 'preact';
import { useContext } from 'preact/hooks';
import { offsetAt } from '../zones/zone-offsets.js';

/**
 * Times as a person reads them (docs/design.md section 10.1): day, month in letters, year, and the time, in the
 * reader's zone and named with it: "27 Nov 2026, 15:02 (Europe/Berlin)", or "27 Nov 2026, 14:02 UTC" for a
 * reader who has chosen none. Each sits in a <time> element that carries the exact instant.
 */
const DAY = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
});

/** The zone of the page's reader; the page's frame provides it (./page.tsx), UTC where none does. */
export const ReaderZone = createContext('UTC');

/** The reader's zone, for a component that writes a time as text rather than with `Moment`. */
export function useReaderZone(): string {
  return useContext(ReaderZone);
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The day's words are kept by the day as read in the zone: a journal page (docs/design.md section 10.5) shows
 * 50 lines that mostly share a day, and formatting each was a fifth of the page's rendering. A local day's
 * words are the same in every zone, so one map serves all. The days kept are bounded. The time of day is two
 * numbers, which need no formatter.
 */
const dayWords = new Map<number, string>();
const twoDigits = (value: number) => String(value).padStart(2, '0');

function localDayWords(day: number): string {
  let words = dayWords.get(day);
  if (words === undefined) {
    if (dayWords.size >= 4096) dayWords.clear();
    words = DAY.format(new Date(day * DAY_MS));
    dayWords.set(day, words);
  }
  return words;
}

/** The zone's name after a time: "UTC", or "(Europe/Berlin)". */
export function zoneWords(zone: string): string {
  return zone === 'UTC' ? 'UTC' : `(${zone})`;
}

/** The day `date` falls on in `zone`, "27 Nov 2026", without the zone's name. */
export function dayText(date: Date, zone = 'UTC'): string {
  const local = date.getTime() + offsetAt(date.getTime(), zone);
  return localDayWords(Math.floor(local / DAY_MS));
}

/** The time of day in `zone`, "15:02" (with seconds, "15:02:09"), without the zone's name. */
export function clockText(date: Date, zone = 'UTC', seconds = false): string {
  const local = date.getTime() + offsetAt(date.getTime(), zone);
  const inDay = local - Math.floor(local / DAY_MS) * DAY_MS;
  const minute = Math.floor(inDay / 60_000);
  const second = seconds ? `:${twoDigits(Math.floor(inDay / 1000) % 60)}` : '';
  return `${twoDigits(Math.floor(minute / 60))}:${twoDigits(minute % 60)}${second}`;
}

/** The moment in words in `zone`, named; `seconds` adds them, for the steps of one opening (section 10.5). */
export function momentText(date: Date, zone = 'UTC', seconds = false): string {
  return `${dayText(date, zone)}, ${clockText(date, zone, seconds)} ${zoneWords(zone)}`;
}

/** A moment in the reader's zone (or `zone`, where the time belongs to a place rather than to the reader). */
export function Moment(props: { date: Date; seconds?: boolean; zone?: string }): VNode {
  const readerZone = useReaderZone();
  return (
    <time dateTime={props.date.toISOString()}>
      {momentText(props.date, props.zone ?? readerZone, props.seconds)}
    </time>
  );
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
