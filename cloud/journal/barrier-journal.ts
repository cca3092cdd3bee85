import { type CompanyDisplay, companyDisplay } from '../companies/display.js';
import type { Database } from '../db/database.js';
import type { EntryOutcome } from './outcome-words.js';

/**
 * The journal a customer sees of one of their barriers (docs/design.md sections 5 and 10.5): newest first,
 * paged by entry id (keyset, never by offset, so that a page deep in the history costs what the first one
 * does, and entries written meanwhile neither repeat nor go missing from the next page), filterable by
 * company and by outcome. Refused attempts are entries like any other.
 *
 * The caller has checked that the barrier is the customer's (cloud/devices/customer-barriers.ts). Entries are
 * further held to the keys this customer granted on it: a controller belongs to one customer at a time, and
 * whoever it belonged to before keeps their journal to themselves.
 */
export interface BarrierJournalFilter {
  customerId: number;
  deviceId: string;
  companyId?: number | undefined;
  outcome?: EntryOutcome | undefined;
}

export interface BarrierJournalEntry {
  id: number;
  at: Date;
  /** The object's label, as the controller names it. */
  objectLabel: string | null;
  company: CompanyDisplay;
  /** The company's text for its employee: shown as text, never as markup. */
  actor: string;
  keyRef: number;
  outcome: EntryOutcome;
  detail: string | null;
  ackedAt: Date | null;
}

export interface BarrierJournalPage {
  entries: BarrierJournalEntry[];
  /** The `before` of the next, older page; null on the last page. */
  older: number | null;
}

/** Entries on one page: enough to read on a phone, few enough to render at once. */
export const PAGE_SIZE = 50;
/** Entries read per query of an export: memory stays flat however long the journal. */
export const EXPORT_BATCH = 1000;

/**
 * One page of entries older than `before` (the newest when absent). One more entry than shown is read, to know
 * whether an older page exists without counting.
 */
export async function barrierJournalPage(
  db: Database,
  filter: BarrierJournalFilter,
  before: number | undefined,
  limit = PAGE_SIZE,
): Promise<BarrierJournalPage> {
  const read = await readEntries(db, filter, before, limit + 1);
  const entries = read.slice(0, limit);
  return { entries, older: read.length > limit ? entries[entries.length - 1]!.id : null };
}

/**
 * Every entry of the filter, newest first, `batchSize` at a time: each batch one query that starts below the
 * last one's oldest entry, so nothing but the current batch is held. Entries written after the first batch
 * was read are newer than all of it, and are left out: the export is the journal as it was when it started.
 */
export async function* barrierJournalBatches(
  db: Database,
  filter: BarrierJournalFilter,
  batchSize = EXPORT_BATCH,
): AsyncGenerator<BarrierJournalEntry[]> {
  let before: number | undefined;
  for (;;) {
    const batch = await readEntries(db, filter, before, batchSize);
    if (batch.length > 0) yield batch;
    if (batch.length < batchSize) return;
    before = batch[batch.length - 1]!.id;
  }
}

/**
 * The companies a customer can filter a barrier's journal by: those holding a key the customer granted on it,
 * which are all those that can appear in its journal (every entry names a key of the caller). Read from the
 * keys, not from the journal, so the list costs the same with a million entries.
 */
export async function barrierCompanies(
  db: Database,
  customerId: number,
  deviceId: string,
): Promise<CompanyDisplay[]> {
  const rows = await db
    .selectFrom('companies')
    .select(['id', 'name', 'domain', 'key_pub'])
    .where('id', 'in', (keys) =>
      keys
        .selectFrom('keys')
        .select('keys.company_id')
        .where('keys.customer_id', '=', customerId)
        .where('keys.device_id', '=', deviceId),
    )
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map(companyDisplay);
}

/**
 * The query behind pages and exports. It walks one of the journal's indexes of migration 0005 backwards from
 * `before`: (device_id, id), or (device_id, company_id, id) with a company, or (device_id, outcome, id) with
 * an outcome (`pending`, an entry still in flight, is the null outcome), and stops after `limit` entries.
 */
async function readEntries(
  db: Database,
  filter: BarrierJournalFilter,
  before: number | undefined,
  limit: number,
): Promise<BarrierJournalEntry[]> {
  let query = db
    .selectFrom('journal')
    .innerJoin('keys', 'keys.id', 'journal.key_id')
    .innerJoin('companies', 'companies.id', 'journal.company_id')
    .leftJoin('device_objects', 'device_objects.id', 'journal.object_id')
    .select([
      'journal.id',
      'journal.at',
      'journal.actor',
      'journal.key_id',
      'journal.outcome',
      'journal.detail',
      'journal.acked_at',
      'device_objects.label as object_label',
      'companies.id as company_id',
      'companies.name as company_name',
      'companies.domain as company_domain',
      'companies.key_pub as company_key',
    ])
    .where('journal.device_id', '=', filter.deviceId)
    .where('keys.customer_id', '=', filter.customerId)
    .orderBy('journal.id', 'desc')
    .limit(limit);
  if (before !== undefined) query = query.where('journal.id', '<', before);
  if (filter.companyId !== undefined) query = query.where('journal.company_id', '=', filter.companyId);
  if (filter.outcome === 'pending') query = query.where('journal.outcome', 'is', null);
  else if (filter.outcome !== undefined) query = query.where('journal.outcome', '=', filter.outcome);
  const rows = await query.execute();
  // A batch names few companies many times; each is made ready for display once.
  const companies = new Map<number, CompanyDisplay>();
  const company = (row: (typeof rows)[number]) => {
    let shown = companies.get(row.company_id);
    if (!shown) {
      shown = companyDisplay({
        id: row.company_id,
        name: row.company_name,
        domain: row.company_domain,
        key_pub: row.company_key,
      });
      companies.set(row.company_id, shown);
    }
    return shown;
  };
  return rows.map((row) => ({
    id: row.id,
    at: row.at,
    objectLabel: row.object_label,
    company: company(row),
    actor: row.actor,
    keyRef: row.key_id,
    outcome: row.outcome ?? 'pending',
    detail: row.detail,
    ackedAt: row.acked_at,
  }));
}
