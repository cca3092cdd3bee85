import { type Kysely, sql } from 'kysely';

/**
 * Delivery of the events to the companies' callback addresses (docs/design.md section 6):
 * - `events.seq`: the order events were written in, which a company's deliveries keep (ids are random);
 * - `events_company_undelivered`: a company's undelivered events in that order, what the worker reads; it
 *   replaces `events_pending` (by due time, across companies), which nothing reads any more, so an event still
 *   costs the insert one partial index;
 * - `events_at`: a BRIN index for the purges by age, cheap to keep since events are written in time order;
 * - a notification after every insert into `events`, sent at commit, that wakes the delivery workers at once;
 * - on `companies`, the endpoint's state: failing since when, for which address and why, paused until when
 *   after a failed attempt, and leased by a worker until when;
 * - `event_deliveries`: the delivery log, one row per attempt, which the company and the operator read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
  await sql.raw(NOTIFY_FUNCTION).execute(db);
  await sql
    .raw(
      'create trigger events_notify after insert on events for each statement execute function events_notify()',
    )
    .execute(db);
}

/**
 * The trigger's function as it was first made; cloud/rules/events/events-notify.sql defines it from then on (applied
 * after the migrations on every start, cloud/foundation/db/functions.ts).
 */
const NOTIFY_FUNCTION = `
    create function events_notify() returns trigger language plpgsql as $body$
    begin
      perform pg_notify('gatelink_events', '');
      return null;
    end
    $body$`;

const SCHEMA = `
    alter table events add column seq bigint generated always as identity;
    create index events_company_undelivered on events (company_id, seq) where delivered_at is null;
    drop index events_pending;
    create index events_at on events using brin (at);

    alter table companies add column callback_failing_since timestamptz;
    alter table companies add column callback_failing_url text;
    alter table companies add column callback_last_error text;
    alter table companies add column callback_paused_until timestamptz;
    alter table companies add column callback_lease_until timestamptz;

    create table event_deliveries (
      id bigint generated always as identity primary key,
      company_id integer not null references companies(id) on delete cascade,
      event_id uuid not null,
      type text not null,
      attempt integer not null,
      at timestamptz not null,
      url text not null,
      outcome text not null check (outcome in ('delivered', 'retry', 'failing')),
      status integer,
      error text,
      duration_ms integer not null,
      next_attempt_at timestamptz
    );
    create index event_deliveries_company on event_deliveries (company_id, id);
    create index event_deliveries_at on event_deliveries using brin (at);
`;
