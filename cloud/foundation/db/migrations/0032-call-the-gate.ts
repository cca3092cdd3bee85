import { type Kysely, sql } from 'kysely';

/**
 * "Call the gate" (docs/design.md section 10.9): while a phone's controller is offline, an `open` on its gate may
 * ask the household to call the gate themselves. `device_objects.gate_number` is the number a phone object
 * dials, as its controller reports it. `opening_questions.kind` tells an "ask me first" question (`allow`, the
 * default, so the previous release's inserts still hold) from a request to call (`call`), whose answer is
 * `called` when someone tapped "Call the gate"; each kind takes only its own answers, and both may end
 * `unanswered`. The answer's check is replaced whole: PostgreSQL named the one of migration 0019 after its column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table device_objects
      add column gate_number text check (gate_number ~ '^\\+?[0-9]{3,20}$')`.execute(db);
  await sql`
    alter table opening_questions
      add column kind text not null default 'allow' check (kind in ('allow', 'call')),
      drop constraint opening_questions_answer_check,
      add constraint opening_questions_answer_check check (
        answer is null or answer = 'unanswered'
        or (kind = 'allow' and answer in ('allowed', 'denied'))
        or (kind = 'call' and answer = 'called'))`.execute(db);
}
