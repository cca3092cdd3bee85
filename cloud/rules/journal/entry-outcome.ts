import { type Expression, expressionBuilder, type SqlBool } from 'kysely';
import type { DB, JournalOutcome } from '../../foundation/db/schema.js';

/**
 * What a journal entry's outcome is as every reader shows and filters it (docs/design.md section 5). `pending`
 * is an opening whose command left and whose outcome is not known yet: stored as the null outcome, written so
 * before the command leaves, and completed once by the controller's acknowledgement (complete-entry.sql) or,
 * past its deadline and 10 s more, settled as `device_timeout` by the sweep of unanswered openings
 * (cloud/rules/opening/unanswered.ts). The journal's readers (journal.ts, barrier-journal.ts,
 * company-journal.ts) and that sweep take the rule from here.
 */
export type EntryOutcome = JournalOutcome | 'pending';

/** A stored outcome as read: none yet is `pending`. */
export function entryOutcome(stored: JournalOutcome | null): EntryOutcome {
  return stored ?? 'pending';
}

/** The condition on `journal.outcome` that picks entries of `outcome`, `pending` ones included. */
export function outcomeIs(outcome: EntryOutcome): Expression<SqlBool> {
  const eb = expressionBuilder<DB, 'journal'>();
  return outcome === 'pending' ? eb('journal.outcome', 'is', null) : eb('journal.outcome', '=', outcome);
}
