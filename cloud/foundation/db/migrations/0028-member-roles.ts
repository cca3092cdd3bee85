import { type Kysely, sql } from 'kysely';

/**
 * A company's members get a role each (docs/design.md section 11.1): `owner`, `member` (a developer: API access,
 * the callback address, events, logo and details) or `viewer` (looks, changes nothing). `member` keeps its
 * name, so the previous release reads and writes the same rows during a rolling upgrade (section 8.2); it
 * reads a viewer as a member until it is gone. One owner per company, which ownership's transfer keeps.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table company_members drop constraint company_members_role_check`.execute(db);
  await sql`alter table company_members add constraint company_members_role_check
              check (role in ('owner', 'member', 'viewer'))`.execute(db);
  await sql`create unique index company_members_one_owner on company_members (company_id)
              where role = 'owner'`.execute(db);
}
