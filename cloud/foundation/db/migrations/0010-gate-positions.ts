import { type Kysely, sql } from 'kysely';

/**
 * The whole opening, seen and proven (docs/design.md sections 5.2, 5.3 and 7.5):
 * - `device_objects`: whether the object has a position sensor, its latest position as the controller signed it
 *   (`position_report`), since when (`position_since`, the controller's time of the change), and the alert
 *   about a gate left open (`left_open_at`, and the entry whose opening left it open);
 * - `devices`: the customer's limits for the barrier: how long a gate may stay open before the alert
 *   (`left_open_limit_s`, 10 minutes by default) and how soon after the relay it must be seen moving
 *   (`move_timeout_s`, 30 s by default);
 * - `journal`: the controller's signed acknowledgement as received (`ack`), the steps after it (`gate_opened_at`,
 *   `gate_closed_at`, `gate_not_moved_at`, `left_open_at`) with the signed position reports that prove them
 *   (`gate_reports`, a JSON array), and the entry's place in its barrier's hash chain (`chain_seq`,
 *   `chain_prev`, `chain_hash`) with the customer whose chain it is (`chain_customer`: a barrier that changes
 *   hands starts a chain for its new owner), set once the entry is final;
 * - `journal_chains`: each (barrier, owner) chain's first `prev` (`genesis`) and head, and when the chain was
 *   last checked and what was found, and the public keys of the controllers whose signatures its entries hold
 *   (`device_keys`, a JSON object by device id);
 * - `retired_device_keys`: a retired controller's public key, kept for the receipts after its record is cleared
 *   (a replaced controller's acknowledgements stay in the barrier's journal).
 * Only added tables and nullable or defaulted columns (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    alter table device_objects add column has_sensor boolean not null default false;
    alter table device_objects add column position text check (position in ('open', 'closed'));
    alter table device_objects add column position_since timestamptz;
    alter table device_objects add column position_report jsonb;
    alter table device_objects add column left_open_at timestamptz;
    alter table device_objects add column left_open_entry integer;

    alter table devices add column left_open_limit_s integer not null default 600
      check (left_open_limit_s between 60 and 86400);
    alter table devices add column move_timeout_s integer not null default 30
      check (move_timeout_s between 5 and 600);

    alter table journal add column ack jsonb;
    alter table journal add column gate_opened_at timestamptz;
    alter table journal add column gate_closed_at timestamptz;
    alter table journal add column gate_not_moved_at timestamptz;
    alter table journal add column left_open_at timestamptz;
    alter table journal add column gate_reports jsonb;
    alter table journal add column chain_customer integer;
    alter table journal add column chain_seq integer;
    alter table journal add column chain_prev text;
    alter table journal add column chain_hash text;

    create unique index journal_chain_seq on journal (device_id, chain_customer, chain_seq)
      where chain_seq is not null;
    create index journal_device_unsealed on journal (device_id, id) where chain_seq is null;

    create table journal_chains (
      device_id text not null,
      customer_id integer not null,
      genesis text not null,
      seq integer not null default 0,
      hash text not null,
      checked_at timestamptz,
      checked_seq integer,
      broken_entry integer,
      broken_reason text,
      device_keys jsonb not null default '{}',
      full_checked_at timestamptz,
      primary key (device_id, customer_id)
    );

    create table retired_device_keys (
      device_id text primary key,
      public_key text not null,
      retired_at timestamptz not null
    )
`;
