import { type Kysely, sql } from 'kysely';

/**
 * The rate limit's count reads at most the limit's worth of rows, whatever a key's journal holds. Before,
 * `open_attempt` read every row of the key in the rolling minute through journal_key_at, refusals included:
 * they do not count, but were read all the same, so a client that keeps calling a rate-limited key (each call a
 * `rate_limit` entry) made every next call slower, for itself and for the database. journal_key_dispatched holds
 * only the attempts that count, and the count stops at the limit (cloud/rules/opening/open-attempt.sql says how and
 * why). journal_key_at served only the old count, so it goes, and with it an index write for every refusal.
 *
 * History: the `open_attempt` below is the one databases migrated at this step received; its definition now
 * lives in cloud/rules/opening/open-attempt.sql and replaces this one on every start (cloud/foundation/db/functions.ts). It stays
 * as it ran for the reason given in migration 0002.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(COUNTED_INDEX).execute(db);
  await sql`drop index journal_key_at`.execute(db);
  await sql.raw(OPEN_ATTEMPT).execute(db);
}

const COUNTED_INDEX = `
create index journal_key_dispatched on journal (key_id, at) where command_id is not null
`;

const OPEN_ATTEMPT = `
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
