-- apply_position_report: one controller's signed position report, applied by apply_position_reports
-- (./apply-position-reports.sql), which holds the rule; returns what became of it. The cloud applies its reports
-- many at a time through that function; this one is kept for the previous release, which calls it during a
-- rolling upgrade (docs/design.md section 8.2), and for a single report. Applied after the migrations on every
-- start, by cloud/foundation/db/functions.ts.
create or replace function apply_position_report(
  p_device text,
  p_object text,
  p_position text,
  p_changed_at bigint,
  p_report jsonb,
  p_now timestamptz
) returns text
language sql volatile
as $body$
  select report_result
    from apply_position_reports(array[p_device], array[p_object], array[p_position], array[p_changed_at],
                                array[p_report], p_now)
$body$;
