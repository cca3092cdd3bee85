import { type Kysely, sql } from 'kysely';

/**
 * Wakes the push delivery (cloud/links/web-push/push-delivery.ts, docs/design.md section 10.6) as soon as a journal
 * entry has its outcome, rather than at its next poll: a notification on `gatelink_push` when a row is inserted
 * with an outcome (a refusal, written by `open_attempt`) or its outcome is set (an acknowledgement, a verdict,
 * `complete_entry`). PostgreSQL sends it at commit and drops it with a rollback, and the same notification sent
 * twice in one transaction arrives once. Row triggers with a condition, not statement triggers: the insert of an
 * opening still waiting for its controller, on `open`'s own path, meets the condition and calls nothing. The
 * triggers need the function, so it is made here; every start defines it again from
 * cloud/rules/push-notifications/push-wake.sql, as every database function is (cloud/foundation/db/functions.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function push_wake() returns trigger language plpgsql as $body$
    begin
      perform pg_notify('gatelink_push', '');
      return null;
    end
    $body$`.execute(db);
  await sql`
    create trigger journal_push_wake_told after insert on journal
      for each row when (new.outcome is not null) execute function push_wake()`.execute(db);
  await sql`
    create trigger journal_push_wake_settled after update of outcome on journal
      for each row when (old.outcome is null and new.outcome is not null) execute function push_wake()`.execute(
    db,
  );
}
