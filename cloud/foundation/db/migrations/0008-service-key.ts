import { type Kysely, sql } from 'kysely';

/**
 * `service_key`: the public half of the service key the database is used with, one row, written by the first
 * instance that starts on it (this migration's own database, or an existing one at its first start after the
 * upgrade). Every later start compares its own key with it and refuses a different one
 * (cloud/rules/service-key/recorded-service-key.ts): an instance signing with a key of its own would have every
 * opening through it fail with bad_signature at the controllers, and webhooks stop verifying.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table service_key (
      id integer primary key check (id = 1),
      public_key text not null,
      recorded_at timestamptz not null default now()
    )`.execute(db);
}
