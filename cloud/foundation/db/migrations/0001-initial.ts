import { type Kysely, sql } from 'kysely';

/**
 * The whole first schema. Plain SQL so it reads the same on PostgreSQL and PGlite. Integer identities
 * everywhere (pg returns int8 as strings; int4 is a number on both drivers).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per call: PGlite's extended protocol takes a single statement.
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    create table companies (
      id integer generated always as identity primary key,
      name text not null,
      domain text unique,
      contact_email text,
      status text not null default 'pending' check (status in ('pending', 'approved', 'suspended')),
      key_pub text,
      key_confirmed_at timestamptz,
      key_checked_at timestamptz,
      key_check_error text,
      key_seen_other text,
      created_at timestamptz not null default now(),
      approved_at timestamptz,
      suspended_at timestamptz
    );

    create table company_secrets (
      id integer generated always as identity primary key,
      company_id integer not null references companies(id) on delete cascade,
      hash text not null unique,
      hint text not null,
      created_at timestamptz not null default now(),
      retires_at timestamptz
    );
    create index company_secrets_company on company_secrets(company_id);

    create table nonces (
      company_id integer not null references companies(id) on delete cascade,
      nonce text not null,
      seen_at timestamptz not null default now(),
      primary key (company_id, nonce)
    );
    create index nonces_seen_at on nonces(seen_at);

    create table customers (
      id integer generated always as identity primary key,
      display_name text not null,
      email text unique,
      created_at timestamptz not null default now()
    );

    create table devices (
      id text primary key,
      label text not null,
      customer_id integer references customers(id),
      public_key text,
      mqtt_password_hash text,
      provisioning_code_hash text unique,
      provisioning_expires_at timestamptz,
      provisioned_at timestamptz,
      pairing_code text unique,
      pairing_expires_at timestamptz,
      online boolean not null default false,
      state_at timestamptz,
      version text,
      telemetry jsonb,
      telemetry_at timestamptz,
      created_at timestamptz not null default now()
    );

    create table device_objects (
      id integer generated always as identity primary key,
      device_id text not null references devices(id) on delete cascade,
      local_id text not null,
      label text not null,
      kind text not null,
      removed_at timestamptz,
      unique (device_id, local_id)
    );

    create table requests (
      id integer generated always as identity primary key,
      code text not null unique,
      company_id integer not null references companies(id),
      ref text,
      ttl_hours integer not null,
      state text not null default 'new' check (state in ('new', 'claimed', 'issued', 'revoked', 'expired')),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      claimed_at timestamptz,
      issued_at timestamptz,
      revoked_at timestamptz,
      expired_at timestamptz,
      customer_id integer references customers(id)
    );
    create index requests_open_expiry on requests(expires_at) where state in ('new', 'claimed');

    create table keys (
      id integer generated always as identity primary key,
      request_id integer not null unique references requests(id),
      company_id integer not null references companies(id),
      customer_id integer not null references customers(id),
      device_id text not null references devices(id),
      issued_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      expiry_recorded_at timestamptz
    );
    create index keys_company on keys(company_id);

    create table key_objects (
      key_id integer not null references keys(id) on delete cascade,
      object_id integer not null references device_objects(id),
      primary key (key_id, object_id)
    );

    create table journal (
      id integer generated always as identity primary key,
      at timestamptz not null default now(),
      device_id text references devices(id),
      object_id integer references device_objects(id),
      company_id integer not null references companies(id),
      key_id integer not null references keys(id),
      actor text not null,
      outcome text,
      detail text,
      command_id uuid unique,
      acked_at timestamptz
    );
    create index journal_key_at on journal(key_id, at);
    create index journal_device_at on journal(device_id, at);

    create table idempotency (
      company_id integer not null references companies(id) on delete cascade,
      action text not null,
      key text not null,
      body_hash text not null,
      status integer,
      response jsonb,
      created_at timestamptz not null default now(),
      primary key (company_id, action, key)
    );
    create index idempotency_created on idempotency(created_at);

    create table events (
      id uuid primary key,
      company_id integer not null references companies(id) on delete cascade,
      type text not null,
      data jsonb not null,
      at timestamptz not null default now(),
      delivered_at timestamptz,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now()
    );
    create index events_pending on events(next_attempt_at) where delivered_at is null;
`;
