import { type Kysely, sql } from 'kysely';

/**
 * An event's retry schedule restarts without its attempts being forgotten (docs/design.md section 6): "Retry now"
 * and a resumed endpoint used to set `attempts` back to 0, so the schedule began again, and the delivery log
 * numbered the next attempt 1 a second time. `schedule_from` is the count of attempts when the schedule last
 * began; the schedule reads `attempts - schedule_from`, the log `attempts`. Added with a default, so that the
 * previous release, which neither reads nor writes it, still runs beside this one (section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column schedule_from integer not null default 0`.execute(db);
}
