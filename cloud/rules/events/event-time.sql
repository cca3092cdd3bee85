-- event_time: an event's time as cloud/rules/events/event-data.ts writes it (`stepTime`: ISO 8601 in UTC, to the
-- millisecond), for the events that database functions record (cloud/rules/positions/apply-position-report.sql).
-- Plain SQL of one expression, so the planner inlines it. Applied after the migrations on every start, by
-- cloud/foundation/db/functions.ts.
create or replace function event_time(p_at timestamptz) returns text
language sql stable
as $body$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$body$;
