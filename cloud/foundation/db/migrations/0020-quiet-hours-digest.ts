import { type Kysely, sql } from 'kysely';

/**
 * Quiet hours and the daily digest (docs/design.md section 10.7).
 *
 * `notification_choices` gains `quiet_from` and `quiet_until` ('HH:MM' in the person's account zone, both or
 * neither; a span may cross midnight) and `email_digest`, one e-mail a day. `by_email` stays what it was, an
 * e-mail for each entry, and wins over `email_digest`: the previous release writes `by_email` alone, so a choice
 * it saves during a rolling upgrade still reads as it meant it, and a new column filled from an old one would
 * be wrong for every row the previous release writes after this migration ran.
 *
 * `mail_digests`: one row per person and local day ('YYYY-MM-DD' as text: both drivers would read a `date` as a
 * JavaScript Date at the machine's midnight), unique, claimed like the e-mail outbox (a lease, the push retry
 * schedule), so that several instances send a day's digest once. `lines` is how many entries it told, 0
 * when the day had none and nothing was sent.
 *
 * Nullable columns, a column with a default and a new table: the previous release's inserts still hold
 * (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table notification_choices
      add column quiet_from text check (quiet_from ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      add column quiet_until text check (quiet_until ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      add column email_digest boolean not null default false,
      add constraint notification_choices_quiet_span
        check ((quiet_from is null) = (quiet_until is null) and (quiet_from is null or quiet_from <> quiet_until))
  `.execute(db);
  await sql`
    create index notification_choices_digest on notification_choices(customer_id)
     where email_digest and not by_email
  `.execute(db);
  await sql`
    create table mail_digests (
      id bigint generated always as identity primary key,
      customer_id integer not null references customers(id) on delete cascade,
      day text not null check (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
      created_at timestamptz not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      sent_at timestamptz,
      gave_up_at timestamptz,
      last_error text,
      lines integer,
      unique (customer_id, day)
    )
  `.execute(db);
  await sql`
    create index mail_digests_due on mail_digests(next_attempt_at)
     where sent_at is null and gave_up_at is null
  `.execute(db);
}
