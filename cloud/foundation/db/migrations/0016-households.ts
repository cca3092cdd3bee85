import { type Kysely, sql } from 'kysely';

/**
 * A barrier's household (docs/design.md section 9.2): the owner stays `devices.customer_id`; the people the owner
 * shares the barrier with are its members, each allowed or not to grant and withdraw (`may_grant`). An
 * invitation waits for the invited address to sign in and accept it: only the hash of its link's token is kept,
 * and it is used once. A request passed from its claimer to a member keeps who passed it (`handed_by`), so the
 * member's page can say so. New tables and a nullable column, so the previous release's inserts and reads still
 * hold (docs/design.md section 8.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table barrier_members (
      device_id text not null references devices(id),
      customer_id integer not null references customers(id),
      may_grant boolean not null,
      added_by integer not null references customers(id),
      joined_at timestamptz not null,
      primary key (device_id, customer_id)
    )
  `.execute(db);
  await sql`create index barrier_members_customer on barrier_members(customer_id)`.execute(db);
  await sql`
    create table barrier_invitations (
      id integer generated always as identity primary key,
      device_id text not null references devices(id),
      email text not null,
      may_grant boolean not null,
      token_hash text not null unique,
      invited_by integer not null references customers(id),
      created_at timestamptz not null,
      expires_at timestamptz not null,
      accepted_at timestamptz,
      accepted_by integer references customers(id),
      withdrawn_at timestamptz
    )
  `.execute(db);
  await sql`create index barrier_invitations_device on barrier_invitations(device_id, created_at desc)`.execute(
    db,
  );
  await sql`alter table requests add column handed_by integer references customers(id)`.execute(db);
}
