-- open_attempt: the checks of an `open` call in order, and its journal entry, in one round trip. Called by
-- cloud/rules/opening/open.ts, which declares the columns it returns (`openAttemptResult`; a test compares them with
-- this function's `returns table`). Applied after the migrations on every start, by cloud/foundation/db/functions.ts: a
-- change to a rule is an edit here, and no new migration.
--
-- The checks, in the order of cloud/README.md, "Opening" (authentication and the body were checked by the
-- caller):
--   1. the company is still approved, else `org_not_approved` with nothing journalled: the caller's
--      authentication may come from a cache (cloud/rules/call-auth/company-cache.ts), and a suspension must still stop
--      every opening at once;
--   2. the key exists and is the caller's, else no row: the caller answers it like a missing key, and another
--      company's attempt leaves no trace in that customer's journal;
--   3. not revoked (`revoked`), 4. within its lifetime (`expired`), both as access_key_lapse says
--      (cloud/rules/access-keys/access-key-lapse.sql), 5. within the shape the customer gave it (`not_started`,
--      `outside_hours`, `openings_used`), as grant_shape_refusal says (cloud/rules/grant-shapes/
--      grant-shape-refusal.sql), its hours read in the barrier's time zone, 6. the object is in the key and not
--      removed (`forbidden`), 7. the rate limit (`rate_limit`, with its wait in seconds).
-- Every attempt past step 2 gets a journal entry. A refusal is written with its outcome and its `open.failed`
-- event, in the same transaction; an attempt let through is written with no outcome and the command id, and
-- the row says where to send the command. An attempt let through on a key that asks first (docs/design.md
-- section 10.8) also gets its question, in the same transaction, and the row says until when it may be answered:
-- the caller waits for the answer before the command leaves.
--
-- Why a function: it is one round trip however many statements it runs, in place of five (begin, the key, the
-- rolling-minute count, the entry, commit), and PL/pgSQL keeps the plans of its statements for the session,
-- where a plain statement is parsed and planned on every call; together that was most of an opening's time in
-- the cloud, on PGlite even more than on PostgreSQL.
--
-- Why a volatile PL/pgSQL function and not one plain statement: the key row is locked first, and the count that
-- follows must see every attempt committed by the calls that held the lock before. A plain statement reads all
-- of its parts from one snapshot taken before it waited for the lock, so two concurrent calls could both count
-- nine; a volatile PL/pgSQL function takes a fresh snapshot for each statement inside it, within the one
-- transaction of the call, exactly as separate statements would. So the limit holds across concurrent calls
-- and cloud instances.
--
-- The rate limit's count reads at most the limit's worth of rows, whatever a key's journal holds. Attempts that
-- reached, or tried to reach, the gate count; refusals do not. Those are exactly the entries with a command id
-- (this function gives one to every attempt it lets through, and to no refusal), which is what the partial
-- index journal_key_dispatched holds (migration 0003): a client that keeps calling a rate-limited key adds
-- refusals that are never read again. The command id never changes, so completing an entry stays a HOT update
-- (an index on the outcome would have made every completion write to every index of the journal). The count
-- stops at the limit: at most that many rows, newest first, and the oldest of them says when a place frees up.
create or replace function open_attempt(
  p_company integer,
  p_key integer,
  p_object integer,
  p_actor text,
  p_now timestamptz,
  p_rate_limit integer,
  p_window_ms integer,
  p_command uuid,
  p_event uuid
) returns table (
  entry_id integer,
  refusal text,
  retry_after_s integer,
  to_device text,
  to_object text,
  ask_until timestamptz
)
language plpgsql volatile
as $body$
#variable_conflict use_column
declare
  k record;
  since timestamptz := p_now - p_window_ms * interval '1 millisecond';
  counted integer;
  oldest timestamptz;
  verdict text;
  wait_s integer;
  entry integer;
  used integer;
  asked_until timestamptz;
begin
  -- 1. The caller's authentication may come from a cache (cloud/rules/call-auth/company-cache.ts): a suspension still
  -- stops every opening at once.
  if not exists (select 1 from companies where companies.id = p_company and companies.status = 'approved') then
    return query select null::integer, 'org_not_approved'::text, null::integer, null::text, null::text,
                        null::timestamptz;
    return;
  end if;

  -- 2. The key, locked: the count below must see every attempt of the calls that held the lock before.
  select keys.id, keys.device_id, keys.revoked_at, keys.expires_at, requests.code, requests.ref,
         keys.starts_at, keys.windows, keys.openings_allowed, keys.ask_first_s, devices.time_zone,
         device_objects.id as object_id, device_objects.local_id as object_local_id
    into k
    from keys
    join requests on requests.id = keys.request_id
    join devices on devices.id = keys.device_id
    left join key_objects on key_objects.key_id = keys.id and key_objects.object_id = p_object
    left join device_objects on device_objects.id = key_objects.object_id
                            and device_objects.removed_at is null
   where keys.id = p_key and keys.company_id = p_company
     for update of keys;
  if not found then
    return;
  end if;

  verdict := access_key_lapse(k.revoked_at, k.expires_at, p_now);
  if verdict is null and k.openings_allowed is not null then
    used := key_openings_used(k.id, k.openings_allowed);
  end if;
  if verdict is null then
    verdict := grant_shape_refusal(k.starts_at, k.windows, k.time_zone, k.openings_allowed, used, p_now);
  end if;
  if verdict is null and k.object_id is null then
    verdict := 'forbidden';
  elsif verdict is null then
    -- Attempts that reached, or tried to reach, the gate count (they have a command id); refusals do
    -- not. Only the newest p_rate_limit are read, through journal_key_dispatched; once that many are in
    -- the window, a place frees up when the oldest of them leaves it.
    select count(*), min(recent.at) into counted, oldest
      from (select journal.at
              from journal
             where journal.key_id = k.id and journal.at > since and journal.command_id is not null
             order by journal.at desc
             limit p_rate_limit) recent;
    if counted >= p_rate_limit then
      verdict := 'rate_limit';
      wait_s := greatest(1, ceil(extract(epoch from (oldest - since))));
    end if;
  end if;

  insert into journal (at, device_id, object_id, company_id, key_id, actor, outcome, command_id)
  values (p_now, k.device_id, k.object_id, p_company, k.id, p_actor, verdict,
          case when verdict is null then p_command end)
  returning journal.id into entry;

  if verdict is not null then
    -- The payload's fields are open_event_data's (cloud/rules/events/open-event.sql); a refusal has no detail.
    insert into events (id, company_id, type, data, at, next_attempt_at)
    values (p_event, p_company, 'open.failed',
            open_event_data(k.code, k.ref, k.id, k.object_id, p_actor, entry, verdict, null),
            p_now, p_now);
  end if;

  if verdict is null and k.ask_first_s is not null then
    asked_until := p_now + k.ask_first_s * interval '1 second';
    insert into opening_questions (journal_id, device_id, asked_at, answer_by)
    values (entry, k.device_id, p_now, asked_until);
  end if;

  return query select entry, verdict, wait_s, k.device_id, k.object_local_id, asked_until;
end
$body$;
