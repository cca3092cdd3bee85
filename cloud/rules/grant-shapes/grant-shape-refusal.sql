-- grant_shape_refusal: whether a key's shape lets it open at `p_now` (docs/design.md section 3.1), the one place
-- this is said. In this order: 'not_started' before its start; 'outside_hours' when it has windows and none of
-- them holds `p_now` read as wall-clock time in the barrier's zone `p_zone`; 'openings_used' once `p_used` (the
-- openings counted so far, null read as none) has reached `p_openings`; null when the shape allows it. A null
-- start, windows or count sets no limit. Asked by open_attempt (cloud/rules/opening/open-attempt.sql) in every
-- `open`, and by cloud/rules/grant-shapes/grant-shape-refusal.ts, which declares its result.
--
-- `p_windows` is the stored form that cloud/rules/grant-shapes/stored-shape.ts writes: ISO weekdays and minutes
-- of the day, `[{"days":[1,5],"from":480,"to":720}]`. A window holds the seconds from `from` up to, not
-- including, `to` on each of its days; one whose `to` is below its `from` crosses midnight and holds `from` to
-- midnight on each of its days and midnight to `to` on the day after each (Sunday's night runs into Monday).
-- Wall-clock time means what the barrier's clock shows: in the hour skipped when clocks go forward nothing is
-- shown, so a window's part inside it never holds; the hour repeated when they go back is shown twice, and a
-- window holding it holds both times.
--
-- Plain SQL of one statement, `stable` because converting to a zone reads the zone database. Applied after the
-- migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function grant_shape_refusal(
  p_starts_at timestamptz,
  p_windows jsonb,
  p_zone text,
  p_openings integer,
  p_used integer,
  p_now timestamptz
) returns text
language sql stable
as $body$
  select case
    when p_now < p_starts_at then 'not_started'
    when p_windows is not null and not exists (
      select
        from (select p_now at time zone p_zone) as wall (at_local),
             lateral (select extract(isodow from wall.at_local)::integer as today,
                             extract(epoch from wall.at_local::time) as second) as here,
             jsonb_array_elements(p_windows) as spec (win),
             lateral (select (spec.win->>'from')::integer * 60 as opens,
                             (spec.win->>'to')::integer * 60 as closes) as bounds
       where case
               when bounds.opens < bounds.closes then
                 spec.win->'days' @> to_jsonb(here.today)
                 and here.second >= bounds.opens and here.second < bounds.closes
               else
                 (spec.win->'days' @> to_jsonb(here.today) and here.second >= bounds.opens)
                 -- the day before today, Monday's being Sunday
                 or (spec.win->'days' @> to_jsonb((here.today + 5) % 7 + 1) and here.second < bounds.closes)
             end
    ) then 'outside_hours'
    when p_openings is not null and coalesce(p_used, 0) >= p_openings then 'openings_used'
  end
$body$;
