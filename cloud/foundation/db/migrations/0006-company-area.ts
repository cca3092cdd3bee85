import { type Kysely, sql } from 'kysely';

/**
 * What the company account area and the operator console need (docs/design.md section 11):
 * - a company may be `rejected`, with the reason it is shown (`status_reason`, also the reason of a suspension);
 * - a domain company's key as last fetched before approval (`key_published`, unpinned: the operator sees its
 *   fingerprint) and the proof that the registrant holds its private key (`key_proven`, the key it proved);
 * - its logo (`logo_hash`, naming a row of `company_logos`, stored here so that every instance serves it) and its
 *   callback address;
 * - a domain names one company only among those an operator let in (approved or suspended): a pending
 *   registration cannot squat a domain and keep its real owner out (section 11.1);
 * - `company_members`: the accounts that act for a company, added by address and bound to the account that
 *   signs in with that address confirmed;
 * - `operators`: accounts with operator rights, who sign in to the console with their own passkeys;
 *   `operator_sessions`: consoles signed in with the operator token itself; `operator_actions`: who did what
 *   to which company, and when;
 * - a company's own requests and openings, newest first, for its area (section 11.4). The journal index is on
 *   columns an entry's completion never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    alter table companies drop constraint companies_status_check;
    alter table companies add constraint companies_status_check
      check (status in ('pending', 'approved', 'rejected', 'suspended'));
    alter table companies add column status_reason text;
    alter table companies add column key_published text;
    alter table companies add column key_published_at timestamptz;
    alter table companies add column key_proven text;
    alter table companies add column callback_url text;

    alter table companies drop constraint companies_domain_key;
    create unique index companies_domain_admitted on companies(domain) where status in ('approved', 'suspended');
    create index companies_domain on companies(domain);

    create table company_logos (
      hash text primary key,
      image bytea not null,
      created_at timestamptz not null
    );
    alter table companies add column logo_hash text references company_logos(hash);

    create table company_members (
      id integer generated always as identity primary key,
      company_id integer not null references companies(id) on delete cascade,
      email text,
      customer_id integer references customers(id) on delete cascade,
      role text not null check (role in ('owner', 'member')),
      added_at timestamptz not null,
      added_by integer references customers(id) on delete set null,
      check (email is not null or customer_id is not null)
    );
    create unique index company_members_email on company_members(company_id, email);
    create unique index company_members_customer on company_members(company_id, customer_id);
    create index company_members_account on company_members(customer_id);
    create index company_members_address on company_members(email) where customer_id is null;

    create table operators (
      customer_id integer primary key references customers(id) on delete cascade,
      added_at timestamptz not null,
      added_by text not null
    );

    create table operator_sessions (
      id_hash text primary key,
      created_at timestamptz not null,
      expires_at timestamptz not null
    );
    create index operator_sessions_expires on operator_sessions(expires_at);

    create table operator_actions (
      id integer generated always as identity primary key,
      at timestamptz not null,
      operator text not null,
      customer_id integer references customers(id) on delete set null,
      company_id integer references companies(id) on delete cascade,
      action text not null,
      reason text
    );
    create index operator_actions_company on operator_actions(company_id, id);

    create index requests_company_id on requests(company_id, id);
    create index requests_company_state_id on requests(company_id, state, id);
    create index journal_company_id on journal(company_id, id)
`;
