import { type Kysely, sql } from 'kysely';

/**
 * Several callback addresses per company, each an endpoint with its own kinds, state, signing secrets and log
 * (docs/design.md section 6.2):
 * - `endpoints`: the address, the kinds it takes, and what `companies.callback_*` kept for the one address (failing
 *   since when and for which address, the last error, paused and leased until when);
 * - `endpoint_events`: where each event stands with each endpoint that takes it (delivered, attempts, the
 *   schedule), what `events.delivered_at` and its neighbours kept for the one address. A row is made when the
 *   event is written, by the trigger `events_endpoints` (cloud/rules/events/events-to-endpoints.sql), so every
 *   release's inserts make them, the previous one's included; `asked` marks one a member asked for by name,
 *   which a change of kinds leaves alone;
 * - `callback_secrets.endpoint_id`, `event_deliveries.endpoint_id` and `company_mails.endpoint_id`: whose secret,
 *   whose attempt, which endpoint an e-mail says is failing.
 *
 * Each company's address becomes its first endpoint, with its state, its signing secrets, its log and a row for
 * each of its events the address took or received. The previous release keeps reading and writing
 * `companies.callback_*` and `events.delivered_at` (section 8.2): this release keeps them as the first endpoint's
 * mirror, and two triggers carry the previous release's own writes over, until a later release contracts them
 * (cloud/rules/events/previous-release-callback.sql and previous-release-secret.sql).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
  // The functions as first made; cloud/foundation/db/functions.ts defines them from then on, as for 0007.
  for (const definition of FIRST_FUNCTIONS) await sql.raw(definition).execute(db);
  for (const statement of TRIGGERS.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    create table endpoints (
      id serial primary key,
      company_id integer not null references companies (id) on delete cascade,
      url text not null,
      kinds text[] check (cardinality(kinds) between 1 and 64),
      created_at timestamptz not null default now(),
      failing_since timestamptz,
      failing_url text,
      last_error text,
      paused_until timestamptz,
      lease_until timestamptz
    );
    create index endpoints_company on endpoints (company_id, id);

    create table endpoint_events (
      endpoint_id integer not null references endpoints (id) on delete cascade,
      event_id uuid not null references events (id) on delete cascade,
      seq bigint not null,
      delivered_at timestamptz,
      attempts integer not null default 0,
      schedule_from integer not null default 0,
      next_attempt_at timestamptz,
      asked boolean not null default false,
      primary key (endpoint_id, seq)
    );
    create index endpoint_events_waiting on endpoint_events (endpoint_id, seq) where delivered_at is null;
    create index endpoint_events_event on endpoint_events (event_id);

    alter table callback_secrets add column endpoint_id integer references endpoints (id) on delete cascade;
    create index callback_secrets_endpoint on callback_secrets (endpoint_id);
    alter table event_deliveries add column endpoint_id integer;
    alter table company_mails add column endpoint_id integer;
    create index event_deliveries_endpoint on event_deliveries (endpoint_id, id);

    insert into endpoints (company_id, url, kinds, failing_since, failing_url, last_error, paused_until, lease_until)
      select id, callback_url, callback_kinds, callback_failing_since, callback_failing_url, callback_last_error,
             callback_paused_until, callback_lease_until
        from companies
       where callback_url is not null
       order by id;

    insert into endpoint_events (endpoint_id, event_id, seq, delivered_at, attempts, schedule_from, next_attempt_at, asked)
      select endpoint.id, event.id, event.seq, event.delivered_at, event.attempts, event.schedule_from,
             event.next_attempt_at, coalesce(event.to_callback, false)
        from events as event
        join endpoints as endpoint on endpoint.company_id = event.company_id
       where event.delivered_at is not null
          or event.to_callback is true
          or (event.to_callback is null
              and (endpoint.kinds is null or event.type = 'ping' or event.type = any(endpoint.kinds)));

    update callback_secrets as secret set endpoint_id = endpoint.id
      from endpoints as endpoint
     where endpoint.company_id = secret.company_id;

    update event_deliveries as attempt set endpoint_id = endpoint.id
      from endpoints as endpoint
     where endpoint.company_id = attempt.company_id
`;

const FIRST_FUNCTIONS = [
  `create function events_to_endpoints() returns trigger language plpgsql as $body$
   begin
     insert into endpoint_events (endpoint_id, event_id, seq)
       select endpoint.id, inserted.id, inserted.seq
         from inserted join endpoints as endpoint on endpoint.company_id = inserted.company_id;
     return null;
   end
   $body$`,
  `create function previous_release_callback() returns trigger language plpgsql as $body$
   begin
     return null;
   end
   $body$`,
  `create function previous_release_secret() returns trigger language plpgsql as $body$
   begin
     return new;
   end
   $body$`,
];

const TRIGGERS = `
    create trigger events_endpoints after insert on events
      referencing new table as inserted
      for each statement execute function events_to_endpoints();
    create trigger previous_release_callback after update of callback_url, callback_kinds on companies
      for each row when (old.callback_url is distinct from new.callback_url
                         or old.callback_kinds is distinct from new.callback_kinds)
      execute function previous_release_callback();
    create trigger previous_release_secret before insert on callback_secrets
      for each row when (new.endpoint_id is null)
      execute function previous_release_secret()
`;
