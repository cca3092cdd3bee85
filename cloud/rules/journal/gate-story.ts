import type { BarrierJournalEntry } from './barrier-journal.js';

/**
 * The story of one opening as a customer reads it on a journal line (docs/design.md section 10.5): after
 * "Opened", what the gate's sensor saw, "gate open after 1.8 s · closed after 42 s", or "relay fired, gate did
 * not move", or a gate left open; and, behind a disclosure, every step with its time. The words are here, in
 * one place, so that the line and its steps never disagree. An entry with nothing from a sensor has no story
 * and reads as before.
 */
export type GateFacts = Pick<
  BarrierJournalEntry,
  | 'at'
  | 'outcome'
  | 'ackedAt'
  | 'deliveredAt'
  | 'gateOpenedAt'
  | 'gateClosedAt'
  | 'gateNotMovedAt'
  | 'leftOpenAt'
>;

/** A piece of the story; `tone` marks what went wrong; `at` is a time said after the words. */
export interface StoryPart {
  words: string;
  tone?: 'bad' | 'warn';
  at?: Date;
}

/** One step of an opening and when it happened. */
export interface GateStep {
  words: string;
  at: Date;
}

/** What the sensor saw after the relay fired, in parts joined by " · "; null when it saw nothing. */
export function gateStory(entry: GateFacts): StoryPart[] | null {
  if (entry.outcome !== 'opened') return null;
  if (entry.gateOpenedAt) {
    const parts: StoryPart[] = [{ words: openedWords(entry.ackedAt, entry.gateOpenedAt) }];
    if (entry.leftOpenAt) parts.push({ words: 'left open, alert at', tone: 'warn', at: entry.leftOpenAt });
    parts.push({
      words: entry.gateClosedAt
        ? `closed after ${durationWords(entry.gateClosedAt.getTime() - entry.gateOpenedAt.getTime())}`
        : 'still open',
    });
    return parts;
  }
  if (entry.gateNotMovedAt) return [{ words: 'relay fired, gate did not move', tone: 'bad' }];
  return null;
}

/**
 * From the relay firing to the gate seen open. The sensor may see the gate move before the controller ends its
 * pulse (a gate that starts at the first touch): that is "as the relay fired", not a negative time.
 */
function openedWords(ackedAt: Date | null, openedAt: Date): string {
  if (!ackedAt) return 'gate open';
  const ms = openedAt.getTime() - ackedAt.getTime();
  return ms <= 0 ? 'gate open as the relay fired' : `gate open after ${durationWords(ms)}`;
}

/**
 * Each step of the opening that is known, in the order they happen: accepted by the cloud, delivered to the
 * controller, relay fired, then what the sensor saw. Shown only beside a story: an entry without a sensor reads
 * as before.
 */
export function gateSteps(entry: GateFacts): GateStep[] {
  const steps: (GateStep | null)[] = [
    { words: 'Accepted by the cloud', at: entry.at },
    entry.deliveredAt ? { words: 'Command delivered to the controller', at: entry.deliveredAt } : null,
    entry.ackedAt ? { words: 'Relay fired', at: entry.ackedAt } : null,
    entry.gateOpenedAt ? { words: 'Gate seen open', at: entry.gateOpenedAt } : null,
    entry.gateNotMovedAt
      ? { words: 'Gate not seen moving: marked “did not move”', at: entry.gateNotMovedAt }
      : null,
    entry.leftOpenAt ? { words: 'Gate left open: alert', at: entry.leftOpenAt } : null,
    entry.gateClosedAt ? { words: 'Gate seen closed', at: entry.gateClosedAt } : null,
  ];
  return steps.filter((step): step is GateStep => step !== null);
}

/**
 * A duration in short words a person reads at a glance: "0.4 s" and "1.8 s" under ten seconds (a gate's motor
 * is judged in tenths), then "42 s", "3 min 5 s", "2 h 4 min", "1 day 3 h". Each form rounds to its own unit,
 * so 59.6 s is "1 min", never "60 s". Negative durations (clocks a little apart) read as none.
 */
export function durationWords(ms: number): string {
  const tenths = Math.round(Math.max(0, ms) / 100);
  if (tenths < 100) return `${tenths % 10 === 0 ? tenths / 10 : (tenths / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return joined(Math.floor(seconds / 60), 'min', seconds % 60, 's');
  const minutes = Math.round(ms / 60_000);
  if (minutes < 24 * 60) return joined(Math.floor(minutes / 60), 'h', minutes % 60, 'min');
  const hours = Math.round(ms / 3600_000);
  const days = Math.floor(hours / 24);
  return joined(days, days === 1 ? 'day' : 'days', hours % 24, 'h');
}

/** "3 min 5 s", or "3 min" when the smaller unit is none. */
function joined(big: number, bigUnit: string, small: number, smallUnit: string): string {
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}
