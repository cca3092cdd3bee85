import { type Kysely, sql } from 'kysely';

/**
 * "Ask me before each opening" (docs/design.md section 10.8). `keys.ask_first_s`: how long an `open` on the key
 * waits for an answer from the barrier's household, null when it opens without asking. `opening_questions`: one
 * row per attempt asked about, keyed by its journal entry; `answer` is written once, by the first person to
 * answer or by the instance whose wait ran out (`unanswered`), so two answers at once settle on one. A new
 * column with no default value needed and a new table, so the previous release's inserts and reads still hold
 * (section 8.2).
 *
 * `open_attempt` gains a column (the question's deadline), and PostgreSQL replaces a function only with the same
 * `returns table`: it is dropped here, and the start that runs this migration defines it again right after, as
 * every start does (cloud/foundation/db/functions.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table keys add column ask_first_s integer
      check (ask_first_s is null or ask_first_s between 10 and 120)
  `.execute(db);
  await sql`
    create table opening_questions (
      journal_id integer primary key references journal(id) on delete cascade,
      device_id text not null references devices(id) on delete cascade,
      asked_at timestamptz not null,
      answer_by timestamptz not null,
      answer text check (answer in ('allowed', 'denied', 'unanswered')),
      answered_by integer references customers(id) on delete set null,
      answered_at timestamptz,
      check ((answer is null) = (answered_at is null))
    )
  `.execute(db);
  await sql`create index opening_questions_open on opening_questions(device_id) where answer is null`.execute(
    db,
  );
  await sql`
    drop function if exists open_attempt(integer, integer, integer, text, timestamptz, integer, integer, uuid, uuid)
  `.execute(db);
}
