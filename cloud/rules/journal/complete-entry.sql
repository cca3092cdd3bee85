-- complete_entry: an outcome applied to a journal entry, once, with its event for the company, in one round
-- trip. Called by completeEntry in cloud/rules/journal/journal.ts, which declares what it returns
-- (`completeEntryResult`; a test compares it with this function's `returns`). Applied after the migrations on
-- every start, by cloud/foundation/db/functions.ts.
--
-- The entry is matched either by id (the caller's own verdict: only an entry with no outcome yet) or by command
-- and device (an acknowledgement); either way only an entry not acknowledged yet. So an ack applied twice, by two
-- instances, or racing the caller's own timeout verdict, changes the entry exactly once, and the one call that
-- changed it records the event. Two statements, not one with a condition on which parameter is set, so that
-- each keeps its index in a cached plan. Returns the entry's id, or null when nothing applied.
create or replace function complete_entry(
  p_entry integer,
  p_command uuid,
  p_device text,
  p_outcome text,
  p_detail text,
  p_late_detail text,
  p_acked_at timestamptz,
  p_now timestamptz,
  p_event uuid
) returns integer
language plpgsql volatile
as $body$
#variable_conflict use_column
declare
  e record;
begin
  if p_entry is not null then
    update journal
       set outcome = p_outcome, detail = p_detail, acked_at = p_acked_at
     where journal.id = p_entry and journal.outcome is null and journal.acked_at is null
    returning journal.id, journal.company_id, journal.key_id, journal.object_id, journal.actor, journal.detail
      into e;
  else
    -- An acknowledgement replaces a device_timeout verdict, and says it came late.
    update journal
       set outcome = p_outcome,
           detail = case when journal.outcome = 'device_timeout' then p_late_detail else p_detail end,
           acked_at = p_acked_at
     where journal.command_id = p_command and journal.device_id = p_device and journal.acked_at is null
    returning journal.id, journal.company_id, journal.key_id, journal.object_id, journal.actor, journal.detail
      into e;
  end if;
  if not found then
    return null;
  end if;

  -- The payload's fields are open_event_data's (cloud/rules/events/open-event.sql).
  insert into events (id, company_id, type, data, at, next_attempt_at)
  select p_event, e.company_id,
         case when p_outcome = 'opened' then 'open.succeeded' else 'open.failed' end,
         open_event_data(requests.code, requests.ref, e.key_id, e.object_id, e.actor, e.id, p_outcome,
                         e.detail),
         p_now, p_now
    from keys
    join requests on requests.id = keys.request_id
   where keys.id = e.key_id;
  return e.id;
end
$body$;
