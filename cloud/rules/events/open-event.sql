-- The `data` of an `open.succeeded` or `open.failed` event, the one place that says which fields it has (the
-- fields of every event kind are declared in shared/company-api/events.ts). Both functions that record an opening's
-- event build it here: open_attempt for a refusal (cloud/rules/opening/open-attempt.sql), complete_entry for an
-- outcome (cloud/rules/journal/complete-entry.sql), so a company reads the same fields whichever wrote the event.
--
-- `detail` appears only when the entry has one. A plain SQL function of one expression, stable like
-- jsonb_build_object, so that the planner inlines it into the insert that calls it: no call of its own per
-- event. Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function open_event_data(
  p_code text,
  p_ref text,
  p_key integer,
  p_object integer,
  p_actor text,
  p_journal integer,
  p_outcome text,
  p_detail text
) returns jsonb
language sql stable
as $body$
  select jsonb_build_object('code', p_code, 'ref', p_ref, 'key_ref', p_key, 'number_id', p_object,
                            'actor', p_actor, 'journal_id', p_journal, 'outcome', p_outcome)
         || case when p_detail is null then '{}'::jsonb else jsonb_build_object('detail', p_detail) end
$body$;
