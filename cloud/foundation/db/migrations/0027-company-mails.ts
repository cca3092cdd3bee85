import { type Kysely, sql } from 'kysely';

/**
 * The e-mails a company's members get when an operator approves or refuses the company and when its callback
 * address is marked failing (docs/design.md section 11.7): one row per member, written in the transaction that
 * made the change, sent at least once by the mail delivery with a lease and retries like the other outboxes
 * (cloud/rules/outboxes/notice-outbox.ts). A new table only, which the previous release never reads
 * (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table company_mails (
      id bigint generated always as identity primary key,
      company_id integer not null references companies(id) on delete cascade,
      customer_id integer not null references customers(id) on delete cascade,
      kind text not null,
      detail text,
      created_at timestamptz not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      sent_at timestamptz,
      gave_up_at timestamptz,
      last_error text
    )
  `.execute(db);
  await sql`
    create index company_mails_due on company_mails(next_attempt_at)
     where sent_at is null and gave_up_at is null
  `.execute(db);
}
