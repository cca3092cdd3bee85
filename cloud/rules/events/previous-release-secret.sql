-- previous_release_secret: a signing secret made by a previous release, which knows one address per company and
-- names no endpoint, belongs to the company's first endpoint (docs/design.md section 6.2): the one that release
-- sees as the company's address (previous-release-callback.sql). Run before each such insert (migration 0036);
-- goes when no running release makes secrets without an endpoint.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function previous_release_secret() returns trigger
language plpgsql
as $body$
begin
  new.endpoint_id := (select id from endpoints where company_id = new.company_id order by id limit 1);
  return new;
end
$body$;
