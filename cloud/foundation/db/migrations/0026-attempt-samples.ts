import { type Kysely, sql } from 'kysely';

/**
 * Each delivery attempt keeps what was sent and what came back (docs/design.md section 6): the headers sent,
 * signatures included, and the answer's headers with the first KiB of its body, so a company sees why its
 * endpoint refused an event without logging on its own side. Nullable columns, empty for earlier attempts and
 * for those that got no answer; the previous release writes rows without them (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table event_deliveries add column sent_headers jsonb, add column answer jsonb`.execute(db);
}
