import { type Kysely, sql } from 'kysely';

/**
 * The kinds of event a company's callback takes (docs/design.md section 6): `companies.callback_kinds`, null for
 * every kind (what every company had before, and kinds added later too). `events.to_callback` is null until it
 * is settled otherwise: false for an event passed over when the kinds changed, so that taking its kind again
 * later never sends it days late; true for one a member asked to have sent whatever its kind. A previous
 * release ignores both and sends every kind, as it always did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table companies
      add column callback_kinds text[] check (cardinality(callback_kinds) between 1 and 64)`.execute(db);
  await sql`alter table events add column to_callback boolean`.execute(db);
}
