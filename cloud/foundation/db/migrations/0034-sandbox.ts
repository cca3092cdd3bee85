import { type Kysely, sql } from 'kysely';

/**
 * The sandbox (docs/design.md section 11.9): a company's sandbox is a company of its own beside it
 * (`companies.sandbox_of`), so that its requests, keys, events, rate limits and journal are apart from the live
 * ones by the same rules that keep two companies apart. `sandboxes` holds what the cloud simulates for it: the
 * simulated customer, the barrier the cloud runs as a controller (its device key sealed, since the cloud signs
 * that controller's acknowledgements and reports), and the outcome its next openings take. Both are added
 * only: the previous release never reads them, and a sandbox company it sees is one it cannot authenticate.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table companies
      add column sandbox_of integer unique references companies (id) on delete cascade`.execute(db);
  await sql`
    create table sandboxes (
      company_id integer primary key references companies (id) on delete cascade,
      customer_id integer not null references customers (id),
      device_id text not null unique references devices (id),
      device_key text not null,
      outcome text not null default 'opened' check (outcome in ('opened', 'offline', 'busy', 'gate_not_moved')),
      created_at timestamptz not null
    )`.execute(db);
}
