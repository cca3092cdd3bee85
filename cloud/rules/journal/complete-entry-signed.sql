-- complete_entry_signed: complete_entry (cloud/rules/journal/complete-entry.sql), and the controller's signed
-- acknowledgement kept on the entry it completed (`journal.ack`), the first step of the entry's receipt
-- (docs/design.md sections 5.2 and 5.3). A function of its own, not a parameter added to complete_entry: a
-- function keeps its signature across releases (docs/design.md section 8.2), so the previous release, running
-- beside this one during a deploy, still calls the complete_entry it knows. Called by completeEntry in
-- cloud/rules/journal/journal.ts and by the batches of cloud/rules/journal/ack-journal.ts, which declare what it
-- returns (`completeEntrySignedResult`). `p_ack` is null for the caller's own verdict (no controller spoke).
-- Applied after complete_entry, on every start, by cloud/foundation/db/functions.ts.
create or replace function complete_entry_signed(
  p_entry integer,
  p_command uuid,
  p_device text,
  p_outcome text,
  p_detail text,
  p_late_detail text,
  p_acked_at timestamptz,
  p_now timestamptz,
  p_event uuid,
  p_ack jsonb
) returns integer
language plpgsql volatile
as $body$
declare
  v_id integer;
begin
  -- An acknowledgement arriving after its entry was sealed (a device_timeout verdict, final 24 h on) changes
  -- nothing: the sealed entry is what the receipts hold (docs/design.md section 5.3).
  if p_entry is null and exists (
    select 1 from journal
     where journal.command_id = p_command and journal.device_id = p_device and journal.chain_seq is not null
  ) then
    return null;
  end if;
  v_id := complete_entry(p_entry, p_command, p_device, p_outcome, p_detail, p_late_detail, p_acked_at, p_now,
                         p_event);
  -- A sealed entry is final (docs/design.md section 5.3); one just completed never is.
  if v_id is not null and p_ack is not null then
    update journal set ack = p_ack where journal.id = v_id and journal.chain_seq is null;
  end if;
  return v_id;
end
$body$;
