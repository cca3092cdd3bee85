import { type Kysely, sql } from 'kysely';

/**
 * `listen` reads a company's events after a place in `events.seq`, delivered or not (docs/design.md section 6.1):
 * the index of undelivered events (migration 0007) does not serve it, so this one does. An index only, which the
 * previous release never notices (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index events_company_seq on events (company_id, seq)`.execute(db);
}
