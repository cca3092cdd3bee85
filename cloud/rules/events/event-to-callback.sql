-- event_to_callback: whether an event goes to its company's callback (docs/design.md section 6), the one place
-- that says so: when a member asked for it (`to_callback` true), or when it was not passed over as the kinds
-- changed (`to_callback` null) and the callback takes its kind now. `p_kinds` is the company's `callback_kinds`,
-- null for every kind; a test event (`ping`) always goes, since it is what a member sends to check the callback.
-- Called by the delivery's queries (cloud/rules/events/callback-kinds.ts) and the metrics' count of events
-- waiting. Plain SQL of one expression, so the planner inlines it. Applied after the migrations on every start,
-- by cloud/foundation/db/functions.ts.
create or replace function event_to_callback(p_to_callback boolean, p_type text, p_kinds text[]) returns boolean
language sql immutable
as $body$
  select p_to_callback is true
         or (p_to_callback is null and (p_kinds is null or p_type = 'ping' or p_type = any(p_kinds)))
$body$;
