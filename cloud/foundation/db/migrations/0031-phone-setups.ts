import { type Kysely, sql } from 'kysely';

/**
 * A provisioning code bound to a customer's account (docs/design.md section 9.3): the customer sets up their own
 * phone as the controller of a gate that opens on a call, with no operator. `setup_customer_id` names the account
 * while the code waits; provisioning pairs the controller to it and clears it. An account that goes takes its
 * waiting codes with it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table devices
      add column setup_customer_id integer references customers (id) on delete cascade`.execute(db);
  await sql`create index devices_setup_customer on devices (setup_customer_id) where setup_customer_id is not null`.execute(
    db,
  );
}
