import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Ack } from '../../../shared/protocol/messages.js';
import type { CloudContext } from '../../foundation/context.js';
import { readValue, type ScalarResult, type SqlType } from '../../foundation/db/function-result.js';
import type { DB, JournalOutcome } from '../../foundation/db/schema.js';
import { companyDisplay } from '../companies/display.js';
import { entryOutcome } from './entry-outcome.js';

/**
 * The journal the customer sees (docs/design.md section 5): one entry per opening attempt, refused ones
 * included. An entry is written before the command leaves, with no outcome, and completed by the
 * acknowledgement, applied once by command id however often it arrives and whichever instance receives it.
 */

/** Which entry to complete: by id (the caller's own verdict), or by command (a controller's ack). */
export type EntryMatch = { id: number } | { commandId: string; deviceId: string };

export interface Completion {
  outcome: JournalOutcome;
  detail: string | null;
  ackedAt: Date | null;
  now: Date;
  /** The controller's signed acknowledgement, kept on the entry (docs/design.md section 5.3); none for a verdict. */
  ack?: Ack | null;
}

/** Said of an ack that arrives after the caller was answered 504. */
const LATE = "acknowledged after the caller's timeout";

/** The detail of an acknowledgement that replaces a `device_timeout` verdict: its own, saying it came late. */
export function lateDetailOf(detail: string | null): string {
  return detail ? `${detail}; ${LATE}` : LATE;
}

/**
 * What complete_entry returns (`returns integer` in complete-entry.sql: the entry's id, or null when nothing
 * applied), declared here once; a test compares it with the database's catalog.
 */
export const completeEntryResult = {
  function: 'complete_entry',
  returns: 'integer',
} as const satisfies ScalarResult<SqlType>;

/** What complete_entry_signed returns (complete-entry-signed.sql): complete_entry's id, the signed ack kept. */
export const completeEntrySignedResult = {
  function: 'complete_entry_signed',
  returns: 'integer',
} as const satisfies ScalarResult<SqlType>;

/**
 * Completes a journal entry and records its event for the company, once, in one call of the database's
 * `complete_entry_signed` (cloud/rules/journal/complete-entry-signed.sql), which keeps the controller's signed
 * ack on the entry and leaves the rest to `complete_entry` (cloud/rules/journal/complete-entry.sql): that takes only an entry not acknowledged yet (and, when
 * matched by id, one with no outcome yet), so an ack applied twice, by two instances, or racing the caller's own
 * timeout verdict, changes the entry exactly once. An acknowledgement replaces a `device_timeout` verdict and
 * says it came late. Returns whether it applied.
 */
export async function completeEntry(
  db: Kysely<DB>,
  match: EntryMatch,
  completion: Completion,
): Promise<boolean> {
  const byId = 'id' in match ? match.id : null;
  const byCommand = 'id' in match ? { commandId: null, deviceId: null } : match;
  const lateDetail = lateDetailOf(completion.detail);
  const ack = completion.ack ? JSON.stringify(completion.ack) : null;
  const result = await sql<{ id: unknown }>`
    select complete_entry_signed(${byId}::integer, ${byCommand.commandId}::uuid, ${byCommand.deviceId}::text,
      ${completion.outcome}::text, ${completion.detail}::text, ${lateDetail}::text,
      ${completion.ackedAt}::timestamptz, ${completion.now}::timestamptz, ${randomUUID()}::uuid,
      ${ack}::jsonb) as id
  `.execute(db);
  return readValue(completeEntrySignedResult, result.rows[0]?.id ?? null) !== null;
}

/** Maps an acknowledgement to the journal's words. */
export function ackOutcome(ack: Ack): { outcome: JournalOutcome; detail: string | null } {
  if (ack.outcome === 'opened') return { outcome: 'opened', detail: null };
  return { outcome: 'device_error', detail: ack.reason ?? ack.outcome };
}

/**
 * Applies an acknowledgement once: the entry of its command that has not been acknowledged yet. Returns
 * false for a repeat, an unknown command, or an ack from a device the command was not sent to.
 */
export function applyAck(ctx: CloudContext, ack: Ack): Promise<boolean> {
  return completeEntry(
    ctx.db,
    { commandId: ack.command_id, deviceId: ack.device_id },
    { ...ackOutcome(ack), ackedAt: new Date(ack.finished_at), now: ctx.clock.now(), ack },
  );
}

export interface JournalQuery {
  deviceId?: string | undefined;
  companyId?: number | undefined;
  customerId?: number | undefined;
  before?: number | undefined;
  limit: number;
}

/** Journal entries in the shape of docs/design.md section 5, newest first, paged by id. */
export async function listJournal(ctx: CloudContext, query: JournalQuery) {
  let select = ctx.db
    .selectFrom('journal')
    .innerJoin('companies', 'companies.id', 'journal.company_id')
    .leftJoin('devices', 'devices.id', 'journal.device_id')
    .leftJoin('device_objects', 'device_objects.id', 'journal.object_id')
    .select([
      'journal.id',
      'journal.at',
      'journal.actor',
      'journal.key_id',
      'journal.outcome',
      'journal.detail',
      'journal.acked_at',
      'journal.device_id',
      'devices.label as device_label',
      'journal.object_id',
      'device_objects.label as object_label',
      'companies.id as company_id',
      'companies.name as company_name',
      'companies.domain as company_domain',
      'companies.key_pub as company_key_pub',
      'companies.logo_hash as company_logo_hash',
    ])
    .orderBy('journal.id', 'desc')
    .limit(query.limit);
  if (query.deviceId) select = select.where('journal.device_id', '=', query.deviceId);
  if (query.companyId) select = select.where('journal.company_id', '=', query.companyId);
  if (query.customerId) select = select.where('devices.customer_id', '=', query.customerId);
  if (query.before) select = select.where('journal.id', '<', query.before);
  const rows = await select.execute();
  return rows.map((row) => {
    // Shown as customers see it everywhere (cloud/rules/companies/display.ts): domain and logo only when verified.
    const company = companyDisplay({
      id: row.company_id,
      name: row.company_name,
      domain: row.company_domain,
      key_pub: row.company_key_pub,
      logo_hash: row.company_logo_hash,
    });
    return {
      id: row.id,
      at: row.at.toISOString(),
      barrier: row.device_id ? { id: row.device_id, name: row.device_label } : null,
      number_id: row.object_id,
      number_label: row.object_label,
      company: {
        id: company.id,
        name: company.name,
        domain: company.verifiedDomain,
        logo_url: company.logoUrl ? new URL(company.logoUrl, ctx.baseUrl()).href : null,
      },
      actor: row.actor,
      key_ref: row.key_id,
      outcome: entryOutcome(row.outcome),
      detail: row.detail,
      acked_at: row.acked_at?.toISOString() ?? null,
    };
  });
}
