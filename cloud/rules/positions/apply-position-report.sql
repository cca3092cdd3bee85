-- apply_position_report: one controller's signed position report applied to its object, and attached to the
-- opening it completes, with the step's events (docs/design.md sections 5.2 and 7.5). The report's signature and
-- device were checked before it came here; `p_report` is stored as received, the proof of the step (section 5.3).
-- Returns what became of it: 'applied', 'repeat', 'stale' or 'unknown_object' (a report too far ahead of the
-- cloud's clock never comes here). Called many at a time by cloud/rules/positions/position-reports.ts, in one
-- statement (`unnest ... with ordinality`), each exactly as alone.
--
-- Only a newer report (a later `changed_at` than the object's latest one) is applied: an equal one is the report
-- of the current position on a connect, an older one replayed or overtaken. A newer report of the position the
-- object already has moves only that mark: a restarted controller dates its first reading at its start, while the
-- gate has stood there since the change the cloud saw, so "open since" and the left-open alert keep that change.
-- The object's row is locked for the report, `no key update`: two instances applying reports of one object take
-- turns and the newer wins, while an opening's journal insert (which takes `key share` on its object) never waits.
-- Sealed entries are never touched (section 5.3). Event fields are those of shared/company-api/events.ts; their
-- common part is open_event_data's (cloud/rules/events/open-event.sql) without the outcome.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function apply_position_report(
  p_device text,
  p_object text,
  p_position text,
  p_changed_at bigint,
  p_report jsonb,
  p_now timestamptz
) returns text
language plpgsql volatile
as $body$
declare
  o record;
  e record;
  v_changed timestamptz := timestamptz 'epoch' + p_changed_at * interval '1 millisecond';
  v_latest bigint;
  -- The entry the report completes, its pulse (the command that started it), and that pulse's first entry.
  v_entry integer;
  v_pulse text;
  v_starter integer;
begin
  select device_objects.id, device_objects.position, device_objects.position_report,
         device_objects.left_open_at, device_objects.left_open_entry
    into o
    from device_objects
   where device_objects.device_id = p_device and device_objects.local_id = p_object
     and device_objects.removed_at is null
     for no key update;
  if not found then
    return 'unknown_object';
  end if;
  v_latest := case when jsonb_typeof(o.position_report -> 'changed_at') = 'number'
                   then (o.position_report ->> 'changed_at')::bigint end;
  if v_latest = p_changed_at then
    return 'repeat';
  end if;
  if v_latest > p_changed_at then
    return 'stale';
  end if;
  if o.position is not distinct from p_position then
    update device_objects set position_report = p_report where device_objects.id = o.id;
    return 'repeat';
  end if;
  update device_objects
     set position = p_position, position_since = v_changed, position_report = p_report
   where device_objects.id = o.id;

  -- The entry the change completes: for `open`, the newest opening of the object that fired its relay, with no
  -- step after it yet, whose command reached the controller before the change and whose relay fired at most the
  -- barrier's move_timeout_s before it (entries acknowledged by an earlier release carry no ack: their firing
  -- time bounds them from below instead); for `closed`, the newest unsealed opening seen open and not closed.
  if p_position = 'open' then
    select j.id, coalesce(j.ack ->> 'pulse', j.command_id::text) into v_entry, v_pulse
      from journal j join devices d on d.id = j.device_id
     where j.object_id = o.id and j.chain_seq is null and j.outcome = 'opened'
       and j.gate_opened_at is null and j.gate_not_moved_at is null
       and coalesce(to_timestamp((j.ack ->> 'received_at')::double precision / 1000), j.acked_at) <= v_changed
       and j.acked_at + make_interval(secs => d.move_timeout_s) >= v_changed
     order by j.id desc limit 1;
  else
    select j.id, coalesce(j.ack ->> 'pulse', j.command_id::text) into v_entry, v_pulse
      from journal j
     where j.object_id = o.id and j.chain_seq is null
       and j.gate_opened_at is not null and j.gate_closed_at is null
     order by j.id desc limit 1;
  end if;
  -- With it, the other openings of its pulse (docs/design.md section 7): a command that joined a pulse under way
  -- names the command that started it, and the gate's move is theirs alike. The pulse's first entry is found by
  -- its command id, and the others are among the object's entries after it.
  if v_pulse is not null then
    select j.id into v_starter from journal j where j.command_id = v_pulse::uuid and j.object_id = o.id;
  end if;
  for e in
    update journal
       set gate_opened_at = case when p_position = 'open' then v_changed else journal.gate_opened_at end,
           gate_closed_at = case when p_position = 'closed' then v_changed else journal.gate_closed_at end,
           gate_reports = coalesce(journal.gate_reports, '[]'::jsonb) || jsonb_build_array(p_report)
     where journal.object_id = o.id and journal.chain_seq is null and journal.outcome = 'opened'
       and journal.id >= least(v_entry, v_starter)
       and (journal.id = v_entry or journal.id = v_starter or journal.ack ->> 'pulse' = v_pulse)
       and case when p_position = 'open'
                then journal.gate_opened_at is null and journal.gate_not_moved_at is null
                else journal.gate_opened_at is not null and journal.gate_closed_at is null end
    returning journal.id, journal.company_id, journal.key_id, journal.object_id, journal.actor,
              journal.acked_at, journal.gate_opened_at
  loop
    -- The step's event, when the entry fired its relay: its kind and the step's times.
    continue when e.acked_at is null;
    insert into events (id, company_id, type, data, at, next_attempt_at)
    select gen_random_uuid(), e.company_id,
           case when p_position = 'open' then 'open.gate_opened' else 'open.gate_closed' end,
           (open_event_data(requests.code, requests.ref, e.key_id, e.object_id, e.actor, e.id, null, null)
             - 'outcome')
           || case when p_position = 'open'
                   then jsonb_build_object('relay_at', event_time(e.acked_at), 'opened_at', event_time(v_changed))
                   else jsonb_build_object('relay_at', event_time(e.acked_at),
                                           'opened_at', event_time(e.gate_opened_at),
                                           'closed_at', event_time(v_changed),
                                           'open_for_s', seconds_between(e.gate_opened_at, v_changed)) end,
           p_now, p_now
      from keys join requests on requests.id = keys.request_id
     where keys.id = e.key_id;
  end loop;

  -- A gate that was left open has its alert cleared, and the company whose opening left it open is told.
  if p_position = 'closed' and o.left_open_at is not null then
    update device_objects set left_open_at = null, left_open_entry = null where device_objects.id = o.id;
    insert into events (id, company_id, type, data, at, next_attempt_at)
    select gen_random_uuid(), journal.company_id, 'gate.closed',
           (open_event_data(requests.code, requests.ref, journal.key_id, journal.object_id, journal.actor,
                            journal.id, null, null) - 'outcome')
           || jsonb_build_object('opened_at', event_time(journal.gate_opened_at),
                                 'left_open_at', event_time(o.left_open_at), 'closed_at', event_time(v_changed),
                                 'open_for_s', seconds_between(journal.gate_opened_at, v_changed)),
           p_now, p_now
      from journal
      join keys on keys.id = journal.key_id
      join requests on requests.id = keys.request_id
     where journal.id = o.left_open_entry and journal.gate_opened_at is not null;
  end if;
  return 'applied';
end
$body$;
