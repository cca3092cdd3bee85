-- previous_release_callback: carries a previous release's change of `companies.callback_url` or `callback_kinds`
-- over to the company's first endpoint (docs/design.md section 6.2), during a rolling upgrade or after a rollback
-- (section 8.2): that release knows one address per company, kept on its row. This release keeps those columns as
-- its first endpoint's mirror (cloud/rules/events/endpoints.ts) and writes them after the endpoint, so its own
-- writes find the endpoint already as they say and change nothing here. Run for each row whose address or kinds
-- changed (migration 0036); goes with the contraction of those columns.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function previous_release_callback() returns trigger
language plpgsql
as $body$
declare
  first_id integer;
  first_url text;
  first_kinds text[];
begin
  select id, url, kinds into first_id, first_url, first_kinds
    from endpoints where company_id = new.id order by id limit 1;
  if new.callback_url is null then
    delete from endpoints where id = first_id;
  elsif first_id is null then
    insert into endpoints (company_id, url, kinds) values (new.id, new.callback_url, new.callback_kinds);
  elsif first_url is distinct from new.callback_url or first_kinds is distinct from new.callback_kinds then
    update endpoints set url = new.callback_url, kinds = new.callback_kinds where id = first_id;
  end if;
  return null;
end
$body$;
