-- apply_position_reports: controllers' signed position reports applied to their objects, and attached to the
-- openings they complete, with the steps' events (docs/design.md sections 5.2 and 7.5). The reports' signatures
-- and devices were checked before they came here; each `p_reports` element is stored as received, the proof of
-- the step (section 5.3). Returns, for each report by its place in the arrays (from 1), what became of it:
-- 'applied', 'repeat', 'stale' or 'unknown_object' (a report too far ahead of the cloud's clock never comes here).
-- Called by cloud/rules/positions/position-reports.ts with the reports of a moment; apply_position_report
-- (./apply-position-report.sql) is one report through it.
--
-- Each report is applied exactly as alone and in the order received, its object's reports one after another:
-- - Only a newer report (a later `changed_at` than the object's latest one) is applied: an equal one is the report
--   of the current position on a connect, an older one replayed or overtaken. A newer report of the position the
--   object already has moves only that mark: a restarted controller dates its first reading at its start, while
--   the gate has stood there since the change the cloud saw, so "open since" and the left-open alert keep it.
-- - Sealed entries are never touched (section 5.3).
-- What the set changes is the cost, not the rule (section 7.5): an object's row is read and locked once, at its
-- first report, and written once, after its last, and the steps' events are recorded in one insert at the end,
-- in the order of their reports; the journal is read and written report by report, as a report may complete an
-- entry that the one before it opened.
--
-- Objects are taken in the order of their device and local id, so that instances applying reports of the same
-- objects lock them in the same order and take turns rather than deadlock. An object's row is locked `no key
-- update`: an opening's journal insert (which takes `key share` on its object) never waits for it. Event fields
-- are those of shared/company-api/events.ts; their common part is open_event_data's
-- (cloud/rules/events/open-event.sql) without the outcome. Applied after the migrations on every start, by
-- cloud/foundation/db/functions.ts.
create or replace function apply_position_reports(
  p_devices text[],
  p_objects text[],
  p_positions text[],
  p_changed_at bigint[],
  p_reports jsonb[],
  p_now timestamptz
) returns table (report_n integer, report_result text)
language plpgsql volatile
as $body$
declare
  r record;
  e record;
  -- The object in hand, as read when its first report came, then as its reports leave it.
  v_device text;
  v_object text;
  v_id integer;
  v_position text;
  v_since timestamptz;
  v_report jsonb;
  v_latest bigint;
  v_left_open_at timestamptz;
  v_left_open_entry integer;
  v_cleared boolean;
  v_changed_row boolean := false;
  -- The report in hand: when it changed, the entry it completes, its pulse, and that pulse's first entry.
  v_changed timestamptz;
  v_entry integer;
  v_pulse text;
  v_starter integer;
  v_opened timestamptz;
  -- The steps' events, recorded together at the end: each its entry (which gives the company, key, object and
  -- actor), its kind and its times.
  ev_entry integer[] := '{}';
  ev_type text[] := '{}';
  ev_times jsonb[] := '{}';
begin
  for r in
    select b.device_id, b.object, b.position, b.changed_at, b.report, b.n,
           lead(b.n) over (partition by b.device_id, b.object order by b.n) is null as last_of_object
      from unnest(p_devices, p_objects, p_positions, p_changed_at, p_reports)
           with ordinality as b (device_id, object, position, changed_at, report, n)
     order by b.device_id, b.object, b.n
  loop
    if v_device is distinct from r.device_id or v_object is distinct from r.object then
      v_device := r.device_id;
      v_object := r.object;
      v_changed_row := false;
      v_cleared := false;
      v_id := null;
      select device_objects.id, device_objects.position, device_objects.position_since,
             device_objects.position_report, device_objects.left_open_at, device_objects.left_open_entry
        into v_id, v_position, v_since, v_report, v_left_open_at, v_left_open_entry
        from device_objects
       where device_objects.device_id = r.device_id and device_objects.local_id = r.object
         and device_objects.removed_at is null
         for no key update;
      v_latest := case when jsonb_typeof(v_report -> 'changed_at') = 'number'
                       then (v_report ->> 'changed_at')::bigint end;
    end if;
    report_n := r.n::integer;
    report_result := case when v_id is null then 'unknown_object'
                          when v_latest = r.changed_at then 'repeat'
                          when v_latest > r.changed_at then 'stale'
                          when v_position is not distinct from r.position then 'repeat'
                          else 'applied' end;
    if v_id is not null and (v_latest is null or v_latest < r.changed_at) then
      v_latest := r.changed_at;
      v_report := r.report;
      v_changed_row := true;
    end if;
    if report_result = 'applied' then
      v_changed := timestamptz 'epoch' + r.changed_at * interval '1 millisecond';
      v_position := r.position;
      v_since := v_changed;
      -- The entry the change completes: for `open`, the newest opening of the object that fired its relay, with no
      -- step after it yet, whose command reached the controller before the change and whose relay fired at most
      -- the barrier's move_timeout_s before it (entries acknowledged by an earlier release carry no ack: their
      -- firing time bounds them from below instead); for `closed`, the newest unsealed opening seen open and not
      -- closed.
      v_starter := null;
      if r.position = 'open' then
        select j.id, coalesce(j.ack ->> 'pulse', j.command_id::text) into v_entry, v_pulse
          from journal j join devices d on d.id = j.device_id
         where j.object_id = v_id and j.chain_seq is null and j.outcome = 'opened'
           and j.gate_opened_at is null and j.gate_not_moved_at is null
           and coalesce(to_timestamp((j.ack ->> 'received_at')::double precision / 1000), j.acked_at) <= v_changed
           and j.acked_at + make_interval(secs => d.move_timeout_s) >= v_changed
         order by j.id desc limit 1;
      else
        select j.id, coalesce(j.ack ->> 'pulse', j.command_id::text) into v_entry, v_pulse
          from journal j
         where j.object_id = v_id and j.chain_seq is null
           and j.gate_opened_at is not null and j.gate_closed_at is null
         order by j.id desc limit 1;
      end if;
      -- With it, the other openings of its pulse (docs/design.md section 7): a command that joined a pulse under
      -- way names the command that started it, and the gate's move is theirs alike. The pulse's first entry is
      -- found by its command id, and the others are among the object's entries after it.
      if v_pulse is not null then
        select j.id into v_starter from journal j where j.command_id = v_pulse::uuid and j.object_id = v_id;
      end if;
      for e in
        update journal
           set gate_opened_at = case when r.position = 'open' then v_changed else journal.gate_opened_at end,
               gate_closed_at = case when r.position = 'closed' then v_changed else journal.gate_closed_at end,
               gate_reports = coalesce(journal.gate_reports, '[]'::jsonb) || jsonb_build_array(r.report)
         where journal.object_id = v_id and journal.chain_seq is null and journal.outcome = 'opened'
           and journal.id >= least(v_entry, v_starter)
           and (journal.id = v_entry or journal.id = v_starter or journal.ack ->> 'pulse' = v_pulse)
           and case when r.position = 'open'
                    then journal.gate_opened_at is null and journal.gate_not_moved_at is null
                    else journal.gate_opened_at is not null and journal.gate_closed_at is null end
        returning journal.id, journal.acked_at, journal.gate_opened_at
      loop
        -- The step's event, when the entry fired its relay: its kind and the step's times.
        continue when e.acked_at is null;
        ev_entry := ev_entry || e.id;
        ev_type := ev_type || case when r.position = 'open' then 'open.gate_opened' else 'open.gate_closed' end;
        ev_times := ev_times || case when r.position = 'open'
            then jsonb_build_object('relay_at', event_time(e.acked_at), 'opened_at', event_time(v_changed))
            else jsonb_build_object('relay_at', event_time(e.acked_at),
                                    'opened_at', event_time(e.gate_opened_at),
                                    'closed_at', event_time(v_changed),
                                    'open_for_s', seconds_between(e.gate_opened_at, v_changed)) end;
      end loop;

      -- A gate that was left open has its alert cleared, and the company whose opening left it open is told.
      if r.position = 'closed' and v_left_open_at is not null then
        select journal.gate_opened_at into v_opened
          from journal
         where journal.id = v_left_open_entry and journal.gate_opened_at is not null;
        if found then
          ev_entry := ev_entry || v_left_open_entry;
          ev_type := ev_type || 'gate.closed'::text;
          ev_times := ev_times || jsonb_build_object('opened_at', event_time(v_opened),
                                                     'left_open_at', event_time(v_left_open_at),
                                                     'closed_at', event_time(v_changed),
                                                     'open_for_s', seconds_between(v_opened, v_changed));
        end if;
        v_left_open_at := null;
        v_left_open_entry := null;
        v_cleared := true;
      end if;
    end if;
    return next;
    -- The object's row written once, after its last report.
    if r.last_of_object and v_changed_row then
      update device_objects
         set position = v_position, position_since = v_since, position_report = v_report,
             left_open_at = case when v_cleared then null else device_objects.left_open_at end,
             left_open_entry = case when v_cleared then null else device_objects.left_open_entry end
       where device_objects.id = v_id;
    end if;
  end loop;

  if cardinality(ev_entry) = 0 then
    return;
  end if;
  insert into events (id, company_id, type, data, at, next_attempt_at)
  select gen_random_uuid(), journal.company_id, step.type,
         (open_event_data(requests.code, requests.ref, journal.key_id, journal.object_id, journal.actor,
                          journal.id, null, null) - 'outcome') || step.times,
         p_now, p_now
    from unnest(ev_entry, ev_type, ev_times) with ordinality as step (entry_id, type, times, n)
    join journal on journal.id = step.entry_id
    join keys on keys.id = journal.key_id
    join requests on requests.id = keys.request_id
   order by step.n;
  return;
end
$body$;
