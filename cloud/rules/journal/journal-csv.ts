import { Readable } from 'node:stream';
import type { Database } from '../../foundation/db/database.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';
import { wallDate } from '../../foundation/zones/zone-offsets.js';
import {
  type BarrierJournalEntry,
  type BarrierJournalFilter,
  type BarrierScope,
  barrierJournalBatches,
  EXPORT_BATCH,
} from './barrier-journal.js';
import { csvLine, UTF8_BOM } from './csv.js';
import { outcomeWords } from './outcome-words.js';

/**
 * A barrier's journal as CSV (docs/design.md section 10.5): the entries of the page's filters, newest first,
 * one line each, with the fields of section 5 and the outcome in the page's words beside its code, then the
 * steps of an opening after the relay (section 7.5), then the entry's time in the reader's zone (section
 * 10.1), named in its header. Columns are only ever added at the end, so that a spreadsheet or a script made
 * for an earlier export still finds each column where it was: the local time is last, not beside the UTC one.
 */
export const JOURNAL_CSV_HEADER = [
  'Time (UTC)',
  'Barrier',
  'Object',
  'Company',
  'Verified domain',
  'Actor',
  'Outcome',
  'Outcome code',
  'Detail',
  'Acknowledged at (UTC)',
  'Key ref',
  'Entry id',
  'Delivered at (UTC)',
  'Gate opened at (UTC)',
  'Gate closed at (UTC)',
  'Gate did not move at (UTC)',
  'Left open alert at (UTC)',
] as const;

/** The header of an export read in `zone`: the columns above, then the local time, named with the zone. */
export function journalCsvHeader(zone: string): string[] {
  return [...JOURNAL_CSV_HEADER, `Local time (${zone})`];
}

/** Who an export is for: the barrier's name, and the zone its reader reads times in. */
export interface JournalCsvReader {
  barrierName: string;
  zone: string;
}

const timestamp = (date: Date | null) => (date ? formatTimestamp(date) : null);

export function journalCsvLine(reader: JournalCsvReader, entry: BarrierJournalEntry): string {
  return csvLine([
    formatTimestamp(entry.at),
    reader.barrierName,
    entry.objectLabel,
    entry.company.name,
    entry.company.verifiedDomain,
    entry.actor,
    outcomeWords(entry.outcome, entry.detail, entry.phoneCall),
    entry.outcome,
    entry.detail,
    timestamp(entry.ackedAt),
    entry.keyRef,
    entry.id,
    timestamp(entry.deliveredAt),
    timestamp(entry.gateOpenedAt),
    timestamp(entry.gateClosedAt),
    timestamp(entry.gateNotMovedAt),
    timestamp(entry.leftOpenAt),
    formatTimestamp(wallDate(entry.at, reader.zone)),
  ]);
}

/**
 * The export as a byte stream that reads the database only as fast as the client takes the bytes: one batch
 * of EXPORT_BATCH entries is read when the stream's buffer (HIGH_WATER bytes) has room again, so memory stays
 * flat whatever the journal's length, and a client that goes away stops the reading (the stream is destroyed,
 * which ends the generator before its next query).
 */
export function journalCsvStream(
  db: Database,
  scope: BarrierScope,
  filter: BarrierJournalFilter,
  reader: JournalCsvReader,
  batchSize = EXPORT_BATCH,
): Readable {
  return Readable.from(journalCsvChunks(db, scope, filter, reader, batchSize), {
    objectMode: false,
    highWaterMark: HIGH_WATER,
  });
}

/**
 * Less than one batch of lines (a batch is some 150 KiB): the stream holds at most the batch being sent, and
 * asks for the next only once it has gone out.
 */
const HIGH_WATER = 64 * 1024;

async function* journalCsvChunks(
  db: Database,
  scope: BarrierScope,
  filter: BarrierJournalFilter,
  reader: JournalCsvReader,
  batchSize: number,
): AsyncGenerator<string> {
  yield UTF8_BOM + csvLine(journalCsvHeader(reader.zone));
  for await (const batch of barrierJournalBatches(db, scope, filter, batchSize)) {
    let chunk = '';
    for (const entry of batch) chunk += journalCsvLine(reader, entry);
    yield chunk;
  }
}
