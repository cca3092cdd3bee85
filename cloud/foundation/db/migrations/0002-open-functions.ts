import { type Kysely, sql } from 'kysely';

/**
 * History: the first `open_attempt` and `complete_entry`, as databases migrated at this step received them.
 * Their definitions now live beside their callers (cloud/rules/opening/open-attempt.sql, cloud/rules/journal/complete-entry.sql,
 * where their reasons are written) and replace these on every start (cloud/foundation/db/functions.ts): edit those, never
 * this. It stays as it ran, not trimmed, so that a fresh database goes through the same steps as one migrated
 * then, and the two are equal after every migration, not only once the files are applied: a later migration
 * that drops or renames one of these functions (as a change of its arguments or result needs, since
 * `create or replace` cannot change them) then acts on both alike.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(OPEN_ATTEMPT).execute(db);
  await sql.raw(COMPLETE_ENTRY).execute(db);
}

const OPEN_ATTEMPT = `
create function open_attempt(
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
  to_object text
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
begin
  -- The caller's authentication may come from a cache (cloud/rules/call-auth/company-cache.ts): a suspension still
  -- stops every opening at once.
  if not exists (select 1 from companies where companies.id = p_company and companies.status = 'approved') then
    return query select null::integer, 'org_not_approved'::text, null::integer, null::text, null::text;
    return;
  end if;

  select keys.id, keys.device_id, keys.revoked_at, keys.expires_at, requests.code, requests.ref,
         device_objects.id as object_id, device_objects.local_id as object_local_id
    into k
    from keys
    join requests on requests.id = keys.request_id
    left join key_objects on key_objects.key_id = keys.id and key_objects.object_id = p_object
    left join device_objects on device_objects.id = key_objects.object_id
                            and device_objects.removed_at is null
   where keys.id = p_key and keys.company_id = p_company
     for update of keys;
  if not found then
    return;
  end if;

  if k.revoked_at is not null then
    verdict := 'revoked';
  elsif k.expires_at is not null and k.expires_at <= p_now then
    verdict := 'expired';
  elsif k.object_id is null then
    verdict := 'forbidden';
  else
    -- Attempts that reached, or tried to reach, the gate count; refusals do not.
    select count(*), min(journal.at) into counted, oldest
      from journal
     where journal.key_id = k.id and journal.at > since
       and (journal.outcome is null
            or journal.outcome in ('opened', 'device_offline', 'device_timeout', 'device_error'));
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
    insert into events (id, company_id, type, data, at, next_attempt_at)
    values (p_event, p_company, 'open.failed',
            jsonb_build_object('code', k.code, 'ref', k.ref, 'key_ref', k.id, 'number_id', k.object_id,
                               'actor', p_actor, 'journal_id', entry, 'outcome', verdict),
            p_now, p_now);
  end if;

  return query select entry, verdict, wait_s, k.device_id, k.object_local_id;
end
$body$
`;

const COMPLETE_ENTRY = `
create function complete_entry(
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

  insert into events (id, company_id, type, data, at, next_attempt_at)
  select p_event, e.company_id,
         case when p_outcome = 'opened' then 'open.succeeded' else 'open.failed' end,
         jsonb_build_object('code', requests.code, 'ref', requests.ref, 'key_ref', e.key_id,
                            'number_id', e.object_id, 'actor', e.actor, 'journal_id', e.id,
                            'outcome', p_outcome)
           || case when e.detail is null then '{}'::jsonb else jsonb_build_object('detail', e.detail) end,
         p_now, p_now
    from keys
    join requests on requests.id = keys.request_id
   where keys.id = e.key_id;
  return e.id;
end
$body$
`;
