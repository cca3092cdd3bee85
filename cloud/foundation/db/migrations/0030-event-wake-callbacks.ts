import { type Kysely, sql } from 'kysely';

/**
 * The trigger that wakes the event delivery sees the events its statement inserted (`referencing new table as
 * inserted`), so that its function (cloud/rules/events/events-notify.sql) can tell whether any of them is for a
 * company with a callback address (docs/design.md section 6). The same function, still a statement trigger; a
 * previous release's function, which ignores the table, runs under it unchanged (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger events_notify on events`.execute(db);
  await sql`
    create trigger events_notify after insert on events
      referencing new table as inserted
      for each statement execute function events_notify()`.execute(db);
}
