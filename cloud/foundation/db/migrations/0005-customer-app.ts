import { type Kysely, sql } from 'kysely';

/**
 * What the customer application needs (docs/design.md section 10):
 * - `sessions`: signed-in browsers, kept here so that every cloud instance sees them; only a hash of the
 *   cookie's value is stored, so a copy of the table signs nobody in;
 * - `passkeys`: a customer's WebAuthn credentials, more than one each;
 * - `webauthn_challenges`: a ceremony's challenge between its two calls, which may reach different instances;
 * - `email_codes`: one-time sign-in codes, stored as hashes, single use, 10 minutes;
 * - `rate_counters`: fixed-window counters shared by instances (the `/c/<code>` lookups and e-mail codes);
 * - `server_secrets`: secrets every instance must share (the CSRF tokens' key), made by the first start;
 * - the customer's own name for a barrier, and when it was paired;
 * - journal indexes for a barrier's pages, newest first, filtered by company or by outcome (keyset by id).
 *   The one on `outcome` makes completing an entry a non-HOT update (migration 0004's concern); measured, that
 *   costs `open` about 5%, and without it a rare outcome's page walks every entry of the barrier (70 ms at
 *   1,000,000 against 4 ms): it stays (docs/design.md section 10.5).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    alter table customers add column email_verified_at timestamptz;

    create table sessions (
      id_hash text primary key,
      customer_id integer not null references customers(id) on delete cascade,
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null
    );
    create index sessions_customer on sessions(customer_id);
    create index sessions_expires on sessions(expires_at);

    create table passkeys (
      id integer generated always as identity primary key,
      customer_id integer not null references customers(id) on delete cascade,
      credential_id text not null unique,
      public_key text not null,
      counter double precision not null default 0,
      transports jsonb not null default '[]',
      name text not null,
      device_type text not null,
      backed_up boolean not null default false,
      created_at timestamptz not null,
      last_used_at timestamptz
    );
    create index passkeys_customer on passkeys(customer_id);

    create table webauthn_challenges (
      id text primary key,
      challenge text not null,
      purpose text not null check (purpose in ('sign_up', 'sign_in', 'add')),
      customer_id integer references customers(id) on delete cascade,
      display_name text,
      expires_at timestamptz not null
    );
    create index webauthn_challenges_expires on webauthn_challenges(expires_at);

    create table email_codes (
      id integer generated always as identity primary key,
      email text not null,
      code_hash text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      attempts integer not null default 0
    );
    create index email_codes_email on email_codes(email, created_at);
    create index email_codes_expires on email_codes(expires_at);

    create table rate_counters (
      bucket text not null,
      key text not null,
      window_start timestamptz not null,
      count integer not null,
      primary key (bucket, key, window_start)
    );
    create index rate_counters_window on rate_counters(window_start);

    create table server_secrets (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now()
    );

    alter table devices add column name text;
    alter table devices add column paired_at timestamptz;
    create index devices_customer on devices(customer_id);
    create index keys_customer_device on keys(customer_id, device_id);

    create index journal_device_id on journal(device_id, id);
    create index journal_device_company_id on journal(device_id, company_id, id);
    create index journal_device_outcome_id on journal(device_id, outcome, id)
`;
