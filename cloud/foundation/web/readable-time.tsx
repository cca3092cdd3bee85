import type { VNode } from 'preact';

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

export function dayText(date: Date): string {
  return DAY.format(date);
}

/**
 * The day's words are kept by UTC day: a journal page (docs/design.md section 10.5) shows 50 lines that mostly
 * share a day, and formatting each was a fifth of the page's rendering. The days kept are bounded. The time of
 * day is two numbers, which need no formatter.
 */
const DAY_MS = 24 * 3600 * 1000;
const dayWords = new Map<number, string>();
const twoDigits = (value: number) => String(value).padStart(2, '0');

/** The moment in words; `seconds` adds them, for the steps of one opening (docs/design.md section 10.5). */
export function momentText(date: Date, seconds = false): string {
  const time = date.getTime();
  const day = Math.floor(time / DAY_MS);
  const minute = Math.floor((time - day * DAY_MS) / 60_000);
  const second = seconds ? `:${twoDigits(Math.floor((time - day * DAY_MS) / 1000) % 60)}` : '';
  let dayPart = dayWords.get(day);
  if (dayPart === undefined) {
    if (dayWords.size >= 4096) dayWords.clear();
    dayPart = DAY.format(date);
    dayWords.set(day, dayPart);
  }
  return `${dayPart}, ${twoDigits(Math.floor(minute / 60))}:${twoDigits(minute % 60)}${second} UTC`;
}

export function Moment(props: { date: Date; seconds?: boolean }): VNode {
  return <time dateTime={props.date.toISOString()}>{momentText(props.date, props.seconds)}</time>;
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
