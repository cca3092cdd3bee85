import { type Kysely, sql } from 'kysely';

/**
 * A barrier's history (docs/design.md section 10.4): one row per act on its access, written in the act's own
 * transaction: a key granted, withdrawn or reshaped, by which customer (null when none of the barrier's
 * customers did it, as when the controller changed hands), with the key and its company. Rows are only added;
 * the index serves the barrier page's newest first. A new table, so the previous release's inserts and reads
 * still hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table access_history (
      id integer generated always as identity primary key,
      device_id text not null references devices(id),
      at timestamptz not null,
      customer_id integer references customers(id),
      act text not null check (act in ('granted', 'withdrawn', 'reshaped')),
      key_id integer not null references keys(id),
      company_id integer not null references companies(id)
    )
  `.execute(db);
  await sql`create index access_history_device on access_history(device_id, at desc, id desc)`.execute(db);
}
