-- push_wake: wakes the push delivery (cloud/links/web-push/push-delivery.ts) as soon as a journal entry has its
-- outcome, rather than at its next poll (docs/design.md section 10.6). Run by the row triggers of migration 0022,
-- whose conditions keep an opening still waiting for its controller, on `open`'s own path, from calling it.
-- PostgreSQL sends the notification at commit and drops it with a rollback, and the same one sent twice in a
-- transaction arrives once. Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
--
-- Only an entry of a barrier someone could be told of wakes it: one whose owner or a member of its household
-- has a browser subscribed, or whose barrier someone asked to be e-mailed about (the people
-- cloud/rules/push-notifications/recipients.ts may write rows for, and more). Any other entry is read past at the
-- delivery's next look, within its poll: on a busy cloud whose customers mostly have no browser subscribed, a
-- fan-out woken for nothing took about 0.5 ms of each opening's database time (section 8.4), against three
-- lookups by key here.
create or replace function push_wake() returns trigger
language plpgsql
as $body$
begin
  if exists (select 1 from devices d join push_subscriptions s on s.customer_id = d.customer_id
              where d.id = new.device_id)
     or exists (select 1 from barrier_members m join push_subscriptions s on s.customer_id = m.customer_id
                 where m.device_id = new.device_id)
     or exists (select 1 from notification_choices c where c.device_id = new.device_id and c.by_email) then
    perform pg_notify('gatelink_push', '');
  end if;
  return null;
end
$body$;
