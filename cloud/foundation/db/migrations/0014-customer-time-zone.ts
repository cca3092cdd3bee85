import { type Kysely, sql } from 'kysely';

/**
 * The zone a customer reads times in (docs/design.md section 10.1): an IANA name, checked by the cloud before it
 * is stored, or null until the browser proposes one or the customer chooses, which pages read as UTC. The column
 * is nullable and new, so the previous release's inserts and reads still hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers add column time_zone text`.execute(db);
}
