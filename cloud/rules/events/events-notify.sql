-- events_notify: wakes the event delivery workers (cloud/links/event-delivery/delivery-worker.ts) and the event
-- streams of `listen` (cloud/links/event-streams/event-streams.ts) as soon as a transaction that wrote an event
-- commits: PostgreSQL holds a notification until its transaction commits, and drops it with a rollback, so nobody
-- is woken for an event that does not exist. Run by the trigger `events_notify` once per inserting statement, not
-- per row (migrations 0007 and 0030), and the same notification sent twice in one transaction arrives once: a
-- transaction costs one however many events it writes (docs/design.md section 6).
-- The payload is 'no_callback' when none of the statement's events is for a company's endpoint (one of its callback
-- addresses that takes its kind: event-to-callback.sql, section 6.2): the streams still wake, the delivery workers do not, since their claim would find nothing to send. Most
-- companies' events on a busy cloud are of that kind (a company that reads its journal, or listens), and a claim
-- woken for nothing took 0.5 ms of an opening's database time (section 8.4). Saving an address wakes the workers
-- itself (cloud/rules/companies/callback-address.ts), for the events held until then.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function events_notify() returns trigger
language plpgsql
as $body$
begin
  if exists (select 1 from inserted join endpoints on endpoints.company_id = inserted.company_id
              where event_to_callback(inserted.to_callback, inserted.type, endpoints.kinds)) then
    perform pg_notify('gatelink_events', '');
  else
    perform pg_notify('gatelink_events', 'no_callback');
  end if;
  return null;
end
$body$;
