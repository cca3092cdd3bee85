import type { VNode } from 'preact';
import { lastDayOf } from '../access-keys/key-lifetime.js';

/**
 * Times as a customer reads them (docs/design.md section 10.3): day, month in letters, year, and the time with
 * "UTC" beside it, since the server cannot know the reader's zone and every time in the company API is UTC.
 * Each sits in a <time> element that carries the exact instant.
 */
const DAY = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
});
const CLOCK = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', hour: '2-digit', minute: '2-digit' });

export function dayText(date: Date): string {
  return DAY.format(date);
}

/**
 * The formatters' words, kept by UTC day and by minute of the day: a journal page (docs/design.md section
 * 10.5) asks for 100 of them, for 50 lines that mostly share a day, and formatting them each time was a fifth
 * of the page's rendering (0.40 ms down to 0.32 ms a page). The words are the formatters' own, so every page
 * reads as before. The days kept are bounded; the minutes of a day are 1,440.
 */
const DAY_MS = 24 * 3600 * 1000;
const dayWords = new Map<number, string>();
const clockWords = new Map<number, string>();

export function momentText(date: Date): string {
  const time = date.getTime();
  const day = Math.floor(time / DAY_MS);
  const minute = Math.floor((time - day * DAY_MS) / 60_000);
  let dayPart = dayWords.get(day);
  if (dayPart === undefined) {
    if (dayWords.size >= 4096) dayWords.clear();
    dayPart = DAY.format(date);
    dayWords.set(day, dayPart);
  }
  let clockPart = clockWords.get(minute);
  if (clockPart === undefined) {
    clockPart = CLOCK.format(date);
    clockWords.set(minute, clockPart);
  }
  return `${dayPart}, ${clockPart} UTC`;
}

export function Moment(props: { date: Date }): VNode {
  return <time dateTime={props.date.toISOString()}>{momentText(props.date)}</time>;
}

/**
 * How long a key lasts, in words: "until you withdraw it", "until the end of 30 Nov 2026 (UTC)" for a key
 * granted until a day, or the exact moment for one that ends at another time.
 */
export function lifetimeText(expiresAt: Date | null): string {
  if (expiresAt === null) return 'until you withdraw it';
  const lastDay = lastDayOf(expiresAt);
  return lastDay ? `until the end of ${dayText(lastDay)} (UTC)` : `until ${momentText(expiresAt)}`;
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
