import { type Kysely, sql } from 'kysely';

/**
 * Grants the customer shapes (docs/design.md section 3.1):
 * - `keys.starts_at`: a delayed start; before it, `open` answers 403 `not_started`. Null: from the grant on.
 * - `keys.windows`: when in the week the key opens, in the barrier's time zone, as
 *   cloud/rules/grant-shapes/stored-shape.ts writes them (`[{"days":[1,5],"from":480,"to":720}]`: ISO weekdays and
 *   minutes of the day); outside them, 403 `outside_hours`. Null: at any hour.
 * - `keys.openings_allowed`: how many openings the key makes in all; once used, 403 `openings_used`. Null: no
 *   count.
 * - `requests.proposed_shape`: what the company asked for in `request`, as it sent it (validated by
 *   shared/company-api/grant-shape.ts); the customer may grant that or less.
 * - `devices.time_zone`: the barrier's IANA time zone, in which its keys' hours are read and its times shown.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table keys
      add column starts_at timestamptz,
      add column windows jsonb,
      add column openings_allowed integer check (openings_allowed between 1 and 1000)
  `.execute(db);
  await sql`alter table requests add column proposed_shape jsonb`.execute(db);
  await sql`alter table devices add column time_zone text not null default 'UTC'`.execute(db);
}
