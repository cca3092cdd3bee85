import { type Kysely, sql } from 'kysely';

/**
 * What each person is told of a barrier's openings, and the e-mail channel (docs/design.md section 10.7).
 * `notification_choices`: one row per barrier and person who chose (the owner or a member); no row is "every
 * opening, no e-mail", so nobody is told less than before this release. `tell` is `every`, `refused` or `none`;
 * `by_email` adds an e-mail to the push. `opening_mail_outbox`: one row per journal entry per person to e-mail,
 * sent at least once by the mail delivery with a lease and retries like `push_outbox`, but a table of its own:
 * an e-mail goes to an account, not to a browser's subscription. Both go with their barrier's record and their
 * person. New tables only, so the previous release's inserts and reads still hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table notification_choices (
      device_id text not null references devices(id) on delete cascade,
      customer_id integer not null references customers(id) on delete cascade,
      tell text not null check (tell in ('every', 'refused', 'none')),
      by_email boolean not null,
      updated_at timestamptz not null,
      primary key (device_id, customer_id)
    )
  `.execute(db);
  await sql`
    create table opening_mail_outbox (
      id bigint generated always as identity primary key,
      customer_id integer not null references customers(id) on delete cascade,
      journal_id integer not null references journal(id) on delete cascade,
      created_at timestamptz not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      sent_at timestamptz,
      gave_up_at timestamptz,
      last_error text,
      unique (customer_id, journal_id)
    )
  `.execute(db);
  await sql`
    create index opening_mail_outbox_due on opening_mail_outbox(next_attempt_at)
     where sent_at is null and gave_up_at is null
  `.execute(db);
  await sql`create index opening_mail_outbox_journal on opening_mail_outbox(journal_id)`.execute(db);
}
