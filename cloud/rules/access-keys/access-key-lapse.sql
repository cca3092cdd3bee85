-- access_key_lapse: whether an access key still opens as far as its lifetime goes (docs/design.md section 3), the one
-- place this is said: 'revoked' once the customer withdrew it, 'expired' once its end has passed (a key ends at
-- its `expires_at`: at that instant it opens no more), null while it is still valid. A withdrawal wins over an
-- end, as `open` answers `revoked` for a withdrawn key whatever its end. Asked by open_attempt
-- (cloud/rules/opening/open-attempt.sql), by the customer's pages (cloud/rules/access-keys/keys-on-barrier.ts) and
-- by the expiry sweep (cloud/rules/access-keys/expiry.ts), through `accessKeyLapse` in cloud/rules/access-keys/key-lifetime.ts.
-- A plain immutable SQL function, so the planner inlines it into the queries that call it. Applied after the
-- migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function access_key_lapse(p_revoked_at timestamptz, p_expires_at timestamptz, p_now timestamptz)
returns text
language sql immutable
as $body$
  select case
    when p_revoked_at is not null then 'revoked'
    when p_expires_at is not null and p_expires_at <= p_now then 'expired'
  end
$body$;
