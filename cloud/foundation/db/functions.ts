import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';

/**
 * The database functions, each defined in one `.sql` file beside the code that calls it, so that a change to a
 * rule is one edit in one file and no new migration. Tables and indexes stay in ./migrations; these files are
 * applied after them on every start (`create or replace function`), so every database, migrated long ago or
 * made today, runs the definitions in this tree.
 *
 * Each file holds one statement: PGlite's extended protocol takes a single statement per query. Listed in the
 * order they are applied: access_key_lapse and the event fields first, and complete_entry before
 * complete_entry_signed, as the ones after them call them.
 */
const FUNCTION_FILES = [
  'rules/access-keys/access-key-lapse.sql',
  'rules/events/open-event.sql',
  'rules/events/event-time.sql',
  'rules/events/seconds-between.sql',
  'rules/events/event-to-callback.sql',
  'rules/events/events-to-endpoints.sql',
  'rules/events/previous-release-callback.sql',
  'rules/events/previous-release-secret.sql',
  'rules/grant-shapes/key-openings-used.sql',
  'rules/grant-shapes/grant-shape-refusal.sql',
  'rules/opening/open-attempt.sql',
  'rules/journal/complete-entry.sql',
  'rules/journal/complete-entry-signed.sql',
  'rules/positions/apply-position-reports.sql',
  'rules/positions/apply-position-report.sql',
  'rules/events/events-notify.sql',
  'rules/push-notifications/push-wake.sql',
];

/** Any fixed number, the same in every instance: it names the lock that applying the functions holds. */
const APPLY_LOCK = 7_420_163_518;

/** The files' text, read once per process; named from cloud/ (tsx runs the sources as they are). */
export const functionDefinitions: readonly string[] = FUNCTION_FILES.map((file) =>
  readFileSync(join(import.meta.dirname, '..', '..', file), 'utf8'),
);

/**
 * Applies every function definition, in one transaction. Instances starting together against one PostgreSQL
 * would otherwise replace the same function at once, and the later one fails with "tuple concurrently updated";
 * the transaction-level advisory lock makes them take turns, and is released by the commit.
 */
export async function applyFunctions<T>(db: Kysely<T>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${APPLY_LOCK}::bigint)`.execute(trx);
    for (const definition of functionDefinitions) await sql.raw(definition).execute(trx);
  });
}
