-- push_wake: wakes the push delivery (cloud/links/web-push/push-delivery.ts) as soon as a journal entry has its
-- outcome, rather than at its next poll (docs/design.md section 10.6). Run by the row triggers of migration 0022,
-- whose conditions keep an opening still waiting for its controller, on `open`'s own path, from calling it.
-- PostgreSQL sends the notification at commit and drops it with a rollback, and the same one sent twice in a
-- transaction arrives once. Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function push_wake() returns trigger
language plpgsql
as $body$
begin
  perform pg_notify('gatelink_push', '');
  return null;
end
$body$;
