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
  -- The step's event, when the entry it attached to fired its relay: its kind and the step's times.
  v_type text;
  v_times jsonb;
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

  if p_position = 'open' then
    -- The newest opening of the object that fired its relay, with no step after it yet, whose command reached
    -- the controller before the change and whose relay fired at most the barrier's move_timeout_s before it.
    -- Entries acknowledged by an earlier release carry no ack: their firing time bounds them from below instead.
    update journal
       set gate_opened_at = v_changed,
           gate_reports = coalesce(journal.gate_reports, '[]'::jsonb) || jsonb_build_array(p_report)
     where journal.id = (
             select j.id from journal j join devices d on d.id = j.device_id
              where j.object_id = o.id and j.chain_seq is null and j.outcome = 'opened'
                and j.gate_opened_at is null and j.gate_not_moved_at is null
                and coalesce(to_timestamp((j.ack ->> 'received_at')::double precision / 1000), j.acked_at)
                    <= v_changed
                and j.acked_at + make_interval(secs => d.move_timeout_s) >= v_changed
              order by j.id desc limit 1)
       and journal.chain_seq is null and journal.gate_opened_at is null and journal.gate_not_moved_at is null
    returning journal.id, journal.company_id, journal.key_id, journal.object_id, journal.actor,
              journal.acked_at
      into e;
    if found and e.acked_at is not null then
      v_type := 'open.gate_opened';
      v_times := jsonb_build_object('relay_at', event_time(e.acked_at), 'opened_at', event_time(v_changed));
    end if;
  else
    -- Closed: the newest unsealed opening of the object seen open and not closed yet.
    update journal
       set gate_closed_at = v_changed,
           gate_reports = coalesce(journal.gate_reports, '[]'::jsonb) || jsonb_build_array(p_report)
     where journal.id = (
             select j.id from journal j
              where j.object_id = o.id and j.chain_seq is null
                and j.gate_opened_at is not null and j.gate_closed_at is null
              order by j.id desc limit 1)
       and journal.chain_seq is null and journal.gate_closed_at is null
    returning journal.id, journal.company_id, journal.key_id, journal.object_id, journal.actor,
              journal.acked_at, journal.gate_opened_at
      into e;
    if found and e.acked_at is not null then
      v_type := 'open.gate_closed';
      v_times := jsonb_build_object('relay_at', event_time(e.acked_at),
                                    'opened_at', event_time(e.gate_opened_at),
                                    'closed_at', event_time(v_changed),
                                    'open_for_s', seconds_between(e.gate_opened_at, v_changed));
    end if;
  end if;

  if v_type is not null then
    insert into events (id, company_id, type, data, at, next_attempt_at)
    select gen_random_uuid(), e.company_id, v_type,
           (open_event_data(requests.code, requests.ref, e.key_id, e.object_id, e.actor, e.id, null, null)
             - 'outcome') || v_times,
           p_now, p_now
      from keys join requests on requests.id = keys.request_id
     where keys.id = e.key_id;
  end if;

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
