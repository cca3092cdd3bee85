import type { Database } from '../../foundation/db/database.js';
import { escapeLike } from '../../foundation/db/like-pattern.js';
import { type EntryOutcome, entryOutcome, outcomeIs } from './entry-outcome.js';

/**
 * The openings a company made, as its account area lists them (docs/design.md section 11.4), so that it can
 * answer "did my employee open that gate?" without asking the customer: every entry of its own keys, refused
 * ones included, newest first, paged by id, filtered by the employee (`actor`, any part of it, any case), by the
 * request's `ref` and by outcome.
 *
 * A barrier is named by its installer's label, never by the name its customer gave it: that name is the
 * customer's own (section 10.4), and `status` never tells it either. Objects carry the labels `status` gives.
 */
export const COMPANY_JOURNAL_PAGE_SIZE = 50;

export interface CompanyJournalFilter {
  actor?: string | undefined;
  ref?: string | undefined;
  outcome?: EntryOutcome | undefined;
  before?: number | undefined;
}

export interface CompanyJournalEntry {
  id: number;
  at: Date;
  actor: string;
  outcome: EntryOutcome;
  detail: string | null;
  keyRef: number;
  ref: string | null;
  barrierLabel: string | null;
  objectLabel: string | null;
  numberId: number | null;
}

export async function companyJournal(
  db: Database,
  companyId: number,
  filter: CompanyJournalFilter,
): Promise<{ entries: CompanyJournalEntry[]; older: number | null }> {
  let query = db
    .selectFrom('journal')
    .innerJoin('keys', 'keys.id', 'journal.key_id')
    .innerJoin('requests', 'requests.id', 'keys.request_id')
    .leftJoin('devices', 'devices.id', 'journal.device_id')
    .leftJoin('device_objects', 'device_objects.id', 'journal.object_id')
    .select([
      'journal.id',
      'journal.at',
      'journal.actor',
      'journal.outcome',
      'journal.detail',
      'journal.key_id',
      'journal.object_id',
      'requests.ref',
      'devices.label as barrier_label',
      'device_objects.label as object_label',
    ])
    .where('journal.company_id', '=', companyId)
    .orderBy('journal.id', 'desc')
    .limit(COMPANY_JOURNAL_PAGE_SIZE + 1);
  if (filter.actor) query = query.where('journal.actor', 'ilike', `%${escapeLike(filter.actor)}%`);
  if (filter.ref) query = query.where('requests.ref', 'like', `${escapeLike(filter.ref)}%`);
  if (filter.outcome) query = query.where(outcomeIs(filter.outcome));
  if (filter.before) query = query.where('journal.id', '<', filter.before);
  const rows = await query.execute();
  const page = rows.slice(0, COMPANY_JOURNAL_PAGE_SIZE);
  return {
    entries: page.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor,
      outcome: entryOutcome(row.outcome),
      detail: row.detail,
      keyRef: row.key_id,
      ref: row.ref,
      barrierLabel: row.barrier_label,
      objectLabel: row.object_label,
      numberId: row.object_id,
    })),
    older: rows.length > COMPANY_JOURNAL_PAGE_SIZE ? page.at(-1)!.id : null,
  };
}
