/**
 * Instants and the wall-clock times people read and type in a time zone (docs/design.md section 3.1): a grant's
 * start is typed as a day and a time in the barrier's zone, and shown back in it. Intl knows every IANA zone
 * and its daylight-saving rules; what it lacks is the way back from a wall-clock time to an instant, which is
 * here. A time that happens twice (clocks go back) is the first of the two, and one that never happens (clocks
 * go forward) is read with the offset before the change, so it lands after the gap, as Temporal's
 * "compatible" disambiguation does.
 */

/** A day `YYYY-MM-DD` and a time `HH:MM`, as a person reads them in a zone. */
export interface WallClock {
  day: string;
  time: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    // The zones in use are few (one per barrier); the cache is bounded all the same.
    if (formatters.size >= 1024) formatters.clear();
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** Whether `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of `instant` in `zone`, as milliseconds since the epoch read as if UTC. */
function wallMs(instant: Date, zone: string): number {
  const parts = Object.fromEntries(
    formatterFor(zone)
      .formatToParts(instant)
      .map((part) => [part.type, Number(part.value)]),
  );
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/** How far `zone` is ahead of UTC at `instant`, in ms. */
export function offsetMs(instant: Date, zone: string): number {
  const whole = new Date(Math.floor(instant.getTime() / 1000) * 1000);
  return wallMs(whole, zone) - whole.getTime();
}

/** The day and time `instant` reads as in `zone`. */
export function wallClockOf(instant: Date, zone: string): WallClock {
  const iso = new Date(wallMs(instant, zone)).toISOString();
  return { day: iso.slice(0, 10), time: iso.slice(11, 16) };
}

/** The instant a person means by `day` at `time` in `zone`; null when the day or the time is not one. */
export function instantOf(wall: WallClock, zone: string): Date | null {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(wall.day);
  const time = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(wall.time);
  if (!day || !time) return null;
  const local = Date.UTC(
    Number(day[1]),
    Number(day[2]) - 1,
    Number(day[3]),
    Number(time[1]),
    Number(time[2]),
  );
  if (new Date(local).toISOString().slice(0, 10) !== wall.day) return null;
  // The offsets a day before and after: equal away from a change; around one, the earlier reading wins.
  const before = offsetMs(new Date(local - 86_400_000), zone);
  const after = offsetMs(new Date(local + 86_400_000), zone);
  for (const offset of [before, after]) {
    const candidate = new Date(local - offset);
    if (wallMs(candidate, zone) === local) return candidate;
  }
  // In the gap clocks skip: read with the offset before the change, which lands after the gap.
  return new Date(local - before);
}
