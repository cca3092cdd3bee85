import type { JournalOutcome } from '../../foundation/db/schema.js';
import { displayDomain } from '../companies/domains.js';
import { entryOutcome } from '../journal/entry-outcome.js';
import { outcomeWords } from '../journal/outcome-words.js';

/**
 * What a notification of an opening carries to the browser (docs/design.md section 10.6), encrypted to the
 * subscription's keys: the barrier, the company as the journal shows it (its domain only once verified), the
 * actor, the outcome in the journal's words, the time, and the address of the barrier's journal page, which the
 * service worker opens on a tap. Never a code, a key, a secret or a link that signs anyone in: a lock screen
 * shows it to whoever holds the phone.
 */
export interface PushPayload {
  kind: 'opening';
  entry: number;
  barrier: string;
  company: string;
  /** The company's verified domain, or null when it has none. */
  company_domain: string | null;
  actor: string;
  outcome: string;
  /** The outcome as the journal stores it (`opened`, ..., `pending`), for the notification's look. */
  outcome_code: string;
  /** The entry's time, ISO 8601 in UTC; the service worker shows it in the phone's own zone. */
  at: string;
  url: string;
}

/** The entry and what it names, as the outbox's claim reads them. */
export interface EntryFacts {
  journal_id: number;
  device_id: string;
  barrier: string;
  company_name: string;
  company_domain: string | null;
  company_key: string | null;
  actor: string;
  outcome: JournalOutcome | null;
  detail: string | null;
  at: Date;
}

export function pushPayload(entry: EntryFacts, baseUrl: string): PushPayload {
  const outcome = entryOutcome(entry.outcome);
  const verified = entry.company_domain !== null && entry.company_key !== null;
  return {
    kind: 'opening',
    entry: entry.journal_id,
    barrier: entry.barrier,
    company: entry.company_name,
    company_domain: verified ? displayDomain(entry.company_domain!) : null,
    actor: entry.actor,
    outcome: outcomeWords(outcome, entry.detail),
    outcome_code: outcome,
    at: entry.at.toISOString(),
    url: `${baseUrl}/barriers/${encodeURIComponent(entry.device_id)}/journal`,
  };
}
