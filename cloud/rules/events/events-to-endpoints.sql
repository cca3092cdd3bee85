-- events_to_endpoints: gives each event written a place with every endpoint of its company that takes its kind
-- (docs/design.md section 6.2): a row of `endpoint_events`, which the delivery worker reads and writes for that
-- endpoint alone. Run by the trigger `events_endpoints` once per inserting statement (migration 0036), so every
-- writer of events makes them, the opening's one statement and a previous release's inserts included, and the
-- kinds are read once, as the event is written: a change of kinds afterwards settles the rows there are
-- (cloud/rules/events/callback-kinds.ts). An event of a company with no endpoint gets none: it is held
-- (cloud/rules/events/held-events.ts). A test event (`ping`) goes to every endpoint, as event-to-callback.sql says.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function events_to_endpoints() returns trigger
language plpgsql
as $body$
begin
  insert into endpoint_events (endpoint_id, event_id, seq)
    select endpoint.id, inserted.id, inserted.seq
      from inserted join endpoints as endpoint on endpoint.company_id = inserted.company_id
     where event_to_callback(null, inserted.type, endpoint.kinds);
  return null;
end
$body$;
