import { sql } from 'kysely';
import { PHONE_CALLS } from '../../../shared/protocol/messages.js';
import type { Database } from '../../foundation/db/database.js';
import type { QuestionAnswer, QuestionKind } from '../../foundation/db/schema.js';
import { type CompanyDisplay, companyDisplay } from '../companies/display.js';
import { type EntryOutcome, entryOutcome, outcomeIs } from './entry-outcome.js';
import type { JournalPhoneCall } from './outcome-words.js';

/**
 * The journal a customer sees of one of their barriers (docs/design.md sections 5 and 10.5): newest first,
 * paged by entry id (keyset, never by offset, so that a page deep in the history costs what the first one
 * does, and entries written meanwhile neither repeat nor go missing from the next page), filterable by
 * company and by outcome. Refused attempts are entries like any other.
 *
 * What a customer sees is the entries of the keys they granted on the barrier (their scope): a controller
 * belongs to one customer at a time, and whoever it belonged to before keeps their journal to themselves.
 * Entries are read by barrier and held to the keys afterwards (readRows says why); on a barrier that changed
 * hands, a page may read through the earlier owner's entries in batches before it is full.
 */
export interface BarrierScope {
  customerId: number;
  deviceId: string;
  /** The keys the customer granted on the barrier: an entry is theirs when it names one. */
  keyRefs: ReadonlySet<number>;
  /** The companies holding those keys, by name: the journal's companies, and its company filter. */
  companies: CompanyDisplay[];
}

export interface BarrierJournalFilter {
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
  /** When the relay fired: the acknowledgement's `finished_at`. */
  ackedAt: Date | null;
  /**
   * The steps of an opening after the acknowledgement (docs/design.md sections 7.5 and 10.5): when the command
   * reached the controller (the signed acknowledgement's `received_at`), and what the gate's sensor saw after
   * the relay fired. All null on an object without a sensor, and on entries from before sensors.
   */
  deliveredAt: Date | null;
  gateOpenedAt: Date | null;
  gateClosedAt: Date | null;
  gateNotMovedAt: Date | null;
  leftOpenAt: Date | null;
  /**
   * The command arrived while the relay was already pulsing for an earlier one, and shared that pulse rather
   * than start its own (its acknowledgement names it, `pulse`; docs/design.md section 7).
   */
  joinedPulse: boolean;
  /**
   * On a gate that opens on a call from the customer's phone (docs/design.md section 12.6), what the phone's call
   * log showed of an opening's call; null on every other object, and on an entry that placed no call.
   */
  phoneCall: JournalPhoneCall | null;
  /**
   * The household's answer, when the key asks before each opening (docs/design.md section 10.8): who allowed or
   * denied it and when, or that nobody answered; null when the attempt asked nothing.
   */
  asked: EntryQuestion | null;
}

export interface EntryQuestion {
  /** `allow`: the key asks first (section 10.8); `call`: the phone was offline, so the household was asked to call the gate (section 10.9). */
  kind: QuestionKind;
  answer: QuestionAnswer | 'waiting';
  by: string | null;
  at: Date | null;
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
 * The customer's keys on the barrier and the companies holding them, read from the keys (a handful of rows)
 * rather than from the journal, so that it costs the same with a million entries.
 */
export async function barrierScope(
  db: Database,
  customerId: number,
  deviceId: string,
): Promise<BarrierScope> {
  const rows = await db
    .selectFrom('keys')
    .innerJoin('companies', 'companies.id', 'keys.company_id')
    .select([
      'keys.id as key_id',
      'companies.id',
      'companies.name',
      'companies.domain',
      'companies.key_pub',
      'companies.logo_hash',
    ])
    .where('keys.customer_id', '=', customerId)
    .where('keys.device_id', '=', deviceId)
    .orderBy('companies.name')
    .orderBy('companies.id')
    .execute();
  const companies = new Map<number, CompanyDisplay>();
  for (const row of rows) if (!companies.has(row.id)) companies.set(row.id, companyDisplay(row));
  return {
    customerId,
    deviceId,
    keyRefs: new Set(rows.map((row) => row.key_id)),
    companies: [...companies.values()],
  };
}

/**
 * The customer's scope on the barrier and one page of its entries older than `before` (the newest when
 * absent). Both are read at once: the entries do not wait for the scope, which only sorts them afterwards.
 * One more entry than shown is read, to know whether an older page exists without counting.
 */
export async function barrierJournalPage(
  db: Database,
  where: { customerId: number; deviceId: string },
  filter: BarrierJournalFilter,
  before: number | undefined,
  limit = PAGE_SIZE,
): Promise<{ scope: BarrierScope; page: BarrierJournalPage }> {
  const [scope, first] = await Promise.all([
    barrierScope(db, where.customerId, where.deviceId),
    readRows(db, where, filter, before, limit + 1),
  ]);
  const entries: BarrierJournalEntry[] = [];
  let read = first;
  let rowsWanted = limit + 1;
  for (;;) {
    entries.push(...ofScope(scope, read));
    if (entries.length > limit || read.length < rowsWanted) break;
    // Entries of another customer's keys were left out (the barrier's earlier owner's): read on, in batches.
    before = read[read.length - 1]!.id;
    rowsWanted = EXPORT_BATCH;
    read = await readRows(db, where, filter, before, rowsWanted);
  }
  const shown = entries.slice(0, limit);
  return {
    scope,
    page: { entries: shown, older: entries.length > limit ? shown[shown.length - 1]!.id : null },
  };
}

/**
 * Every entry of the filter in the scope, newest first, `batchSize` read at a time: each batch one query that
 * starts below the last one's oldest entry, so nothing but the current batch is held. Entries written after
 * the first batch was read are newer than all of it, and are left out: the export is the journal as it was
 * when it started.
 */
export async function* barrierJournalBatches(
  db: Database,
  scope: BarrierScope,
  filter: BarrierJournalFilter,
  batchSize = EXPORT_BATCH,
): AsyncGenerator<BarrierJournalEntry[]> {
  let before: number | undefined;
  for (;;) {
    const read = await readRows(db, scope, filter, before, batchSize);
    const batch = ofScope(scope, read);
    if (batch.length > 0) yield batch;
    if (read.length < batchSize) return;
    before = read[read.length - 1]!.id;
  }
}

type JournalRow = Awaited<ReturnType<typeof readRows>>[number];

/**
 * The query behind pages and exports: the barrier's entries, walked backwards from `before` along one of the
 * journal's indexes of migration 0005: (device_id, id), or (device_id, company_id, id) with a company, or
 * (device_id, outcome, id) with an outcome (`pending`, an entry still in flight, is the null outcome),
 * stopping after `limit` entries. It names the barrier alone, which the planner estimates well from the
 * journal's statistics; a condition on the customer's keys in the query left it guessing, and then it chose
 * to read every entry of the filter and sort them, for every batch of an export. The customer is checked by
 * a condition on the barrier alone, which PostgreSQL evaluates once before reading any entry (a one-time
 * filter): another customer's barrier reads nothing.
 */
function readRows(
  db: Database,
  where: { customerId: number; deviceId: string },
  filter: BarrierJournalFilter,
  before: number | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('journal')
    .leftJoin('device_objects', 'device_objects.id', 'journal.object_id')
    .leftJoin('opening_questions as question', 'question.journal_id', 'journal.id')
    .leftJoin('customers as answerer', 'answerer.id', 'question.answered_by')
    .select([
      'question.asked_at as asked_at',
      'question.answer as question_answer',
      'question.kind as question_kind',
      'question.answered_at as answered_at',
      'answerer.display_name as answered_by',
      'journal.id',
      'journal.at',
      'journal.company_id',
      'journal.actor',
      'journal.key_id',
      'journal.outcome',
      'journal.detail',
      'journal.acked_at',
      // Only the one number of the signed acknowledgement that a line shows, not the whole of it.
      sql<string | null>`journal.ack ->> 'received_at'`.as('received_at'),
      sql<boolean | null>`journal.ack ? 'pulse'`.as('joined_pulse'),
      sql<string | null>`journal.ack ->> 'call'`.as('call'),
      'device_objects.kind as object_kind',
      'journal.gate_opened_at',
      'journal.gate_closed_at',
      'journal.gate_not_moved_at',
      'journal.left_open_at',
      'device_objects.label as object_label',
    ])
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('devices')
          .select('devices.id')
          .where('devices.id', '=', where.deviceId)
          .where('devices.customer_id', '=', where.customerId),
      ),
    )
    .where('journal.device_id', '=', where.deviceId)
    .orderBy('journal.id', 'desc')
    .limit(limit);
  if (before !== undefined) query = query.where('journal.id', '<', before);
  if (filter.companyId !== undefined) query = query.where('journal.company_id', '=', filter.companyId);
  if (filter.outcome !== undefined) query = query.where(outcomeIs(filter.outcome));
  return query.execute();
}

/** The rows of the customer's keys, as entries. */
function ofScope(scope: BarrierScope, rows: JournalRow[]): BarrierJournalEntry[] {
  const companies = new Map(scope.companies.map((company) => [company.id, company]));
  const entries: BarrierJournalEntry[] = [];
  for (const row of rows) {
    const company = companies.get(row.company_id);
    if (!company || !scope.keyRefs.has(row.key_id)) continue;
    entries.push({
      id: row.id,
      at: row.at,
      objectLabel: row.object_label,
      company,
      actor: row.actor,
      keyRef: row.key_id,
      outcome: entryOutcome(row.outcome),
      detail: row.detail,
      ackedAt: row.acked_at,
      deliveredAt: millisDate(row.received_at),
      gateOpenedAt: row.gate_opened_at,
      gateClosedAt: row.gate_closed_at,
      gateNotMovedAt: row.gate_not_moved_at,
      leftOpenAt: row.left_open_at,
      joinedPulse: row.joined_pulse === true,
      phoneCall: phoneCallOf(row.object_kind, row.outcome, row.call, row.question_kind),
      asked:
        row.asked_at === null || row.question_kind === null
          ? null
          : {
              kind: row.question_kind,
              answer: row.question_answer ?? 'waiting',
              by: row.answered_by,
              at: row.answered_at,
            },
    });
  }
  return entries;
}

/**
 * What an opening's call did, on a phone's object: `tapped` when someone of the household dialled it by hand while
 * the phone's controller was offline (section 10.9); else the acknowledgement's `call`, or `placed` from a release
 * that did not say (the acknowledgement is the controller's JSON, kept as received, so anything else reads as
 * that).
 */
function phoneCallOf(
  kind: string | null,
  outcome: string | null,
  call: string | null,
  asked: QuestionKind | null,
): JournalPhoneCall | null {
  if (kind !== 'phone' || outcome !== 'opened') return null;
  if (asked === 'call') return 'tapped';
  return PHONE_CALLS.find((known) => known === call) ?? 'placed';
}

/**
 * The acknowledgement's `received_at`, milliseconds as the controller signed them, as a date; null when the
 * entry holds no acknowledgement or the number is not a time (the column is the controller's JSON, kept as
 * received).
 */
function millisDate(text: string | null): Date | null {
  if (text === null || !/^\d{1,15}$/.test(text)) return null;
  return new Date(Number(text));
}
