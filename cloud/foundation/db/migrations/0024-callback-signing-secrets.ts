import { type Kysely, sql } from 'kysely';

/**
 * The callback's signing secrets (docs/design.md section 6): each delivery carries, beside the `v1a` signature
 * with the service key, a `v1` HMAC-SHA256 signature under a secret of the company's (`whsec_...`), which the
 * Standard Webhooks libraries verify. The secret must be at hand for every delivery, so it is kept sealed with a
 * server secret rather than hashed; `hint` is its last four characters, for the list. A rotated secret keeps
 * signing beside the new one until `retires_at`. A new table, which the previous release never reads, so both
 * run side by side (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table callback_secrets (
      id serial primary key,
      company_id integer not null references companies (id) on delete cascade,
      sealed text not null,
      hint text not null,
      created_at timestamptz not null default now(),
      retires_at timestamptz
    )`.execute(db);
  await sql`create index callback_secrets_company on callback_secrets (company_id)`.execute(db);
}
