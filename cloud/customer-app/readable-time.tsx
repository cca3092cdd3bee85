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

export function momentText(date: Date): string {
  return `${DAY.format(date)}, ${CLOCK.format(date)} UTC`;
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
