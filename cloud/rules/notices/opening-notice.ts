import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { EntryFacts } from '../push-notifications/push-payload.js';

/**
 * What a notice of an opening reads of its journal entry (docs/design.md section 10.6): the barrier, the company
 * as the journal shows it, the actor, the outcome and the time; said by ../push-notifications/push-payload.ts and
 * ../mail-notifications/opening-mail.ts.
 */
export async function openingFacts(db: Database, ids: readonly number[]): Promise<Map<number, EntryFacts>> {
  const { rows } = await sql<EntryFacts>`
    select j.id as journal_id, j.device_id, coalesce(d.name, d.label) as barrier, c.name as company_name,
           c.domain as company_domain, c.key_pub as company_key, j.actor, j.outcome, j.detail, j.at
      from journal j
      join devices d on d.id = j.device_id
      join companies c on c.id = j.company_id
     where j.id in (${sql.join(ids)})`.execute(db);
  return new Map(rows.map((row) => [row.journal_id, row]));
}
