-- seconds_between: the seconds from one step to the next, to a tenth, as `secondsBetween` in
-- cloud/rules/events/event-data.ts says them (both round half up), for the events that database functions record;
-- a double, so that the event says 40 as JavaScript does, not 40.0.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function seconds_between(p_from timestamptz, p_to timestamptz) returns double precision
language sql immutable
as $body$
  select round(extract(epoch from (p_to - p_from)), 1)::double precision
$body$;
