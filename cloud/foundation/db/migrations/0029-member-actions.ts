import { type Kysely, sql } from 'kysely';

/**
 * What each member did in a company (docs/design.md section 11.8): who, what and when, one row per change made
 * from the company area, written in the change's own transaction. `member` keeps who it was as shown then
 * ("Ann <ann@example.com>"), so the record still reads right once the account is renamed or gone. A new table
 * only, which the previous release never reads (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table member_actions (
      id bigint generated always as identity primary key,
      company_id integer not null references companies(id) on delete cascade,
      at timestamptz not null,
      customer_id integer references customers(id) on delete set null,
      member text not null,
      action text not null,
      detail text
    )
  `.execute(db);
  await sql`create index member_actions_company on member_actions (company_id, id)`.execute(db);
}
