import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';

/**
 * The channel that wakes the event delivery workers and the `listen` streams at once (docs/design.md section 6):
 * notified by the trigger on `events` (events-notify.sql, migrations 0007 and 0030) and by the changes that make
 * events due again (./delivery-store.ts, ../companies/callback-address.ts); listened on by
 * cloud/links/event-delivery/delivery-worker.ts and cloud/links/event-streams/event-streams.ts.
 */
export const EVENTS_WAKE_CHANNEL = 'gatelink_events';

/**
 * The payload events-notify.sql sends when none of a statement's events is for a company with a callback
 * address: the streams wake on it, the delivery workers do not.
 */
export const NO_CALLBACK_WAKE = 'no_callback';

/** Wakes the delivery workers when `db`'s transaction commits: events became due that no insert announced. */
export async function wakeEventDelivery(db: Database): Promise<void> {
  await sql`select pg_notify(${EVENTS_WAKE_CHANNEL}, '')`.execute(db);
}
