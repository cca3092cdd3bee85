import { type Kysely, sql } from 'kysely';

/**
 * Position reports, cheap to apply (docs/design.md section 7.5):
 * - `journal_object_unsealed`: an object's unsealed openings, newest first. A position report attaches its step
 *   to the newest unsealed opening of its object, and the left-open sweep names the opening that left a gate
 *   open. Without it, both walk the whole journal, every barrier's, backwards from its newest entry until one of
 *   the object's turns up: a few entries for a busy gate, all of them since its last opening for a quiet one.
 *   Partial like journal_device_unsealed: an entry leaves it once sealed, so it holds about a day of openings
 *   at most (section 5.3).
 * - room on each new page of the journal (`fillfactor` 85): an opening's later steps (the gate seen open, then
 *   closed) change no indexed column, so PostgreSQL can write them beside the entry without touching any of
 *   the journal's indexes, when its page has room for them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index journal_object_unsealed on journal (object_id, id) where chain_seq is null`.execute(
    db,
  );
  await sql`alter table journal set (fillfactor = 85)`.execute(db);
}
