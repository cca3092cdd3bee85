import { type Kysely, sql } from 'kysely';

/**
 * Web Push of openings to the customer's devices (docs/design.md section 10.6). `push_subscriptions`: one row
 * per browser a customer turned notifications on in, its push service's endpoint (one account at a time), the
 * keys its payloads are encrypted to, and the name the customer gives it. `push_outbox`: one row per journal
 * entry per subscription to tell, sent at least once by the push delivery, which claims rows with a lease
 * (`locked_until`) and retries them with backoff until `sent_at` or `gave_up_at`; it goes with its subscription.
 * `push_journal_cursor`: the last journal entry the fan-out has read, one row, starting at the journal's end so
 * that no one is told of openings from before the feature existed. New tables only, so the previous release's
 * inserts and reads still hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table push_subscriptions (
      id integer generated always as identity primary key,
      customer_id integer not null references customers(id) on delete cascade,
      endpoint text not null unique,
      p256dh text not null,
      auth text not null,
      name text not null,
      created_at timestamptz not null,
      last_delivered_at timestamptz
    )
  `.execute(db);
  await sql`create index push_subscriptions_customer on push_subscriptions(customer_id, id)`.execute(db);
  await sql`
    create table push_outbox (
      id bigint generated always as identity primary key,
      subscription_id integer not null references push_subscriptions(id) on delete cascade,
      journal_id integer not null references journal(id) on delete cascade,
      created_at timestamptz not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      sent_at timestamptz,
      gave_up_at timestamptz,
      last_error text,
      unique (subscription_id, journal_id)
    )
  `.execute(db);
  await sql`
    create index push_outbox_due on push_outbox(next_attempt_at)
     where sent_at is null and gave_up_at is null
  `.execute(db);
  await sql`create index push_outbox_journal on push_outbox(journal_id)`.execute(db);
  await sql`
    create table push_journal_cursor (
      only_row boolean primary key default true check (only_row),
      last_entry_id integer not null
    )
  `.execute(db);
  await sql`insert into push_journal_cursor (last_entry_id) select coalesce(max(id), 0) from journal`.execute(
    db,
  );
}
