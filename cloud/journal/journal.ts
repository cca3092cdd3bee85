import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Ack } from '../../shared/protocol/messages.js';
import { displayDomain } from '../companies/domains.js';
import type { CloudContext } from '../context.js';
import type { DB, JournalOutcome } from '../db/schema.js';
import { enqueueEvent } from '../events/outbox.js';

/**
 * The journal the customer sees (decisions.md section 5): one entry per opening attempt, refused ones
 * included. An entry is written before the command leaves, with no outcome, and completed by the
 * acknowledgement, applied once by command id however often it arrives and whichever instance receives it.
 */

export async function recordOutcome(
  trx: Transaction<DB>,
  entry: { id: number; outcome: JournalOutcome; detail: string | null; ackedAt: Date | null; now: Date },
): Promise<void> {
  const row = await trx
    .updateTable('journal')
    .set({ outcome: entry.outcome, detail: entry.detail, acked_at: entry.ackedAt })
    .where('id', '=', entry.id)
    .returning(['company_id', 'key_id', 'object_id', 'actor', 'at'])
    .executeTakeFirstOrThrow();
  const request = await trx
    .selectFrom('keys')
    .innerJoin('requests', 'requests.id', 'keys.request_id')
    .select(['requests.code', 'requests.ref'])
    .where('keys.id', '=', row.key_id)
    .executeTakeFirstOrThrow();
  await enqueueEvent(trx, {
    companyId: row.company_id,
    type: entry.outcome === 'opened' ? 'open.succeeded' : 'open.failed',
    at: entry.now,
    data: {
      code: request.code,
      ref: request.ref,
      key_ref: row.key_id,
      number_id: row.object_id,
      actor: row.actor,
      journal_id: entry.id,
      outcome: entry.outcome,
      ...(entry.detail ? { detail: entry.detail } : {}),
    },
  });
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
export async function applyAck(ctx: CloudContext, ack: Ack): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const entry = await trx
      .selectFrom('journal')
      .select(['id', 'outcome'])
      .where('command_id', '=', ack.command_id)
      .where('device_id', '=', ack.device_id)
      .where('acked_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!entry) return false;
    const { outcome, detail } = ackOutcome(ack);
    const late = entry.outcome === 'device_timeout';
    await recordOutcome(trx, {
      id: entry.id,
      outcome,
      detail: late ? `${detail ? `${detail}; ` : ''}acknowledged after the caller's timeout` : detail,
      ackedAt: new Date(ack.finished_at),
      now: ctx.clock.now(),
    });
    return true;
  });
}

export interface JournalQuery {
  deviceId?: string | undefined;
  companyId?: number | undefined;
  customerId?: number | undefined;
  before?: number | undefined;
  limit: number;
}

/** Journal entries in the shape of decisions.md section 5, newest first, paged by id. */
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
      sql<string | null>`case when companies.key_pub is not null then companies.domain end`.as(
        'company_domain',
      ),
    ])
    .orderBy('journal.id', 'desc')
    .limit(query.limit);
  if (query.deviceId) select = select.where('journal.device_id', '=', query.deviceId);
  if (query.companyId) select = select.where('journal.company_id', '=', query.companyId);
  if (query.customerId) select = select.where('devices.customer_id', '=', query.customerId);
  if (query.before) select = select.where('journal.id', '<', query.before);
  const rows = await select.execute();
  return rows.map((row) => ({
    id: row.id,
    at: row.at.toISOString(),
    barrier: row.device_id ? { id: row.device_id, name: row.device_label } : null,
    number_id: row.object_id,
    number_label: row.object_label,
    company: {
      id: row.company_id,
      name: row.company_name,
      domain: row.company_domain ? displayDomain(row.company_domain) : null,
      logo_url: null,
    },
    actor: row.actor,
    key_ref: row.key_id,
    outcome: row.outcome ?? 'pending',
    detail: row.detail,
    acked_at: row.acked_at?.toISOString() ?? null,
  }));
}
