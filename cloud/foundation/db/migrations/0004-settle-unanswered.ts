import { type Kysely, sql } from 'kysely';

/**
 * What the sweep of unanswered openings needs (cloud/rules/opening/unanswered.ts):
 * - `idempotency.command_id`: the command an `open` claim sent, so that the sweep can give a claim whose
 *   instance died the outcome its journal entry settled on;
 * - a BRIN index on `journal.at`, so that the sweep reads only the page ranges of its time window. The journal
 *   is appended in time order, so the index is a few pages and costs an insert almost nothing; and `at` never
 *   changes, so completing an entry stays a HOT update (an index on `outcome` would have broken that).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency add column command_id uuid`.execute(db);
  await sql`create index journal_at_brin on journal using brin (at)`.execute(db);
}
