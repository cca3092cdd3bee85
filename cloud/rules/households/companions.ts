import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';

/**
 * Whom a customer may pass a claimed request to (docs/design.md section 9.2): the people they share a barrier
 * with, either way round (its owner, its other members), who may grant on one of those shared barriers. A
 * look-only member is left out: the request would reach someone who cannot grant it. Nobody outside the
 * customer's households is ever named.
 */
export interface Companion {
  customerId: number;
  name: string;
  email: string | null;
}

export async function householdCompanions(db: Database, customerId: number): Promise<Companion[]> {
  const { rows } = await sql<{ id: number; display_name: string; email: string | null }>`
    with shared as (
      select id as device_id from devices where customer_id = ${customerId}
      union
      select device_id from barrier_members where customer_id = ${customerId}
    ),
    granters as (
      select d.customer_id from shared s join devices d on d.id = s.device_id
      union
      select m.customer_id from shared s join barrier_members m on m.device_id = s.device_id where m.may_grant
    )
    select c.id, c.display_name, c.email
      from customers c join granters g on g.customer_id = c.id
     where c.id <> ${customerId}
     order by c.display_name, c.id
  `.execute(db);
  return rows.map((row) => ({ customerId: row.id, name: row.display_name, email: row.email }));
}

/** The companion with this id, or null when the customer shares no barrier with them that they may grant on. */
export async function companionOf(
  db: Database,
  customerId: number,
  otherId: number,
): Promise<Companion | null> {
  const companions = await householdCompanions(db, customerId);
  return companions.find((companion) => companion.customerId === otherId) ?? null;
}
