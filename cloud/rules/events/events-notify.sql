-- events_notify: wakes the event delivery workers (cloud/links/event-delivery/delivery-worker.ts) as soon as a transaction
-- that wrote an event commits: PostgreSQL holds a notification until its transaction commits, and drops it with
-- a rollback, so a worker is never woken for an event that does not exist. Run by the trigger `events_notify`
-- once per inserting statement, not per row (migration 0007), and the same notification sent twice in one
-- transaction arrives once: a transaction costs one however many events it writes (docs/design.md section 6).
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function events_notify() returns trigger
language plpgsql
as $body$
begin
  perform pg_notify('gatelink_events', '');
  return null;
end
$body$;
