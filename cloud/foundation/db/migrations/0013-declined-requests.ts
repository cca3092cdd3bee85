import { type Kysely, sql } from 'kysely';

/**
 * A customer's no is an answer (docs/design.md sections 3 and 10.3): `requests.state` may be `declined`, and
 * `requests.declined_at` says when. A declined request ends there: it is neither claimed, granted nor expired
 * afterwards. The state check only widens and the column is nullable, so the previous release's inserts and
 * reads still hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table requests
      drop constraint requests_state_check,
      add constraint requests_state_check
        check (state in ('new', 'claimed', 'issued', 'revoked', 'expired', 'declined')),
      add column declined_at timestamptz
  `.execute(db);
}
