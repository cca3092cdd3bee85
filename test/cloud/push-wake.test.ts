import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import {
  FAN_OUT_BATCH,
  fanOutBacklog,
  GAP_GRACE_MS,
} from '../../cloud/rules/push-notifications/journal-fan-out.js';
import { PUSH_WAKE_CHANNEL } from '../../cloud/rules/push-notifications/push-wake.js';
import {
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * What wakes the push delivery at once (cloud/rules/push-notifications/push-wake.sql, docs/design.md section
 * 10.6): an entry given its outcome on a barrier someone could be told of, that is whose owner or household
 * member has a browser subscribed, or whose barrier someone asked to be e-mailed about. An entry nobody could
 * be told of wakes nothing; the delivery reads past it at its next look. Read off the notifications: a marker
 * sent after each case's commit arrives after anything that commit sent, since notifications arrive in the
 * order their transactions committed. And how far one look of the delivery reads the journal: through a backlog,
 * whatever its length.
 */
let database: TestDatabase;
let cloud: TestCloud;
const heard: (string | undefined)[] = [];
let unlisten: () => Promise<void>;
let owner: number;
let barrier: JournalBarrier;
let holder: KeyHolder;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  unlisten = await database.listen!(PUSH_WAKE_CHANNEL, (payload) => heard.push(payload));
  owner = (await createCustomer(cloud.ctx, { displayName: 'Owner' })).id;
  barrier = await journalBarrier(cloud.ctx, owner, 'Home');
  holder = await keyHolder(cloud.ctx, { customerId: owner, barrier, name: 'Courier Ltd' });
});

afterAll(async () => {
  await unlisten?.();
  await cloud?.stop();
  await database?.close();
});

/** An opening journaled on the barrier, then the marker: what the opening's commit woke, in order. */
async function wokenByAnOpening(): Promise<(string | undefined)[]> {
  heard.length = 0;
  await insertEntries(cloud.ctx, barrier, [{ holder, outcome: 'opened' }]);
  await sql`select pg_notify(${PUSH_WAKE_CHANNEL}, 'marker')`.execute(cloud.ctx.db);
  await waitFor(() => heard.includes('marker'), 'the marker');
  return heard.slice(0, heard.indexOf('marker'));
}

async function subscribe(customerId: number, endpoint: string): Promise<void> {
  await cloud.ctx.db
    .insertInto('push_subscriptions')
    .values({
      customer_id: customerId,
      endpoint,
      p256dh: 'key',
      auth: 'auth',
      name: 'Phone',
      created_at: cloud.ctx.clock.now(),
    })
    .execute();
}

describe('an opening journaled', () => {
  it('on a barrier nobody could be told of wakes nothing', async () => {
    expect(await wokenByAnOpening()).toEqual([]);
  });

  it('on a barrier whose owner asked for e-mail wakes the delivery', async () => {
    await cloud.ctx.db
      .insertInto('notification_choices')
      .values({
        device_id: barrier.deviceId,
        customer_id: owner,
        tell: 'every',
        by_email: true,
        updated_at: cloud.ctx.clock.now(),
      })
      .execute();
    expect(await wokenByAnOpening()).toEqual(['']);
    await cloud.ctx.db.deleteFrom('notification_choices').execute();
  });

  it('on a barrier with a household member whose browser is subscribed wakes the delivery', async () => {
    const member = (await createCustomer(cloud.ctx, { displayName: 'Member' })).id;
    await cloud.ctx.db
      .insertInto('barrier_members')
      .values({
        device_id: barrier.deviceId,
        customer_id: member,
        may_grant: false,
        added_by: owner,
        joined_at: cloud.ctx.clock.now(),
      })
      .execute();
    await subscribe(member, 'https://push.example/member');
    expect(await wokenByAnOpening()).toEqual(['']);
    await cloud.ctx.db.deleteFrom('push_subscriptions').execute();
    expect(await wokenByAnOpening()).toEqual([]);
  });

  it("on a barrier whose owner's browser is subscribed wakes the delivery", async () => {
    await subscribe(owner, 'https://push.example/owner');
    expect(await wokenByAnOpening()).toEqual(['']);
  });
});

describe("a delivery's look", () => {
  it('reads a backlog longer than a batch through, to the last entry', async () => {
    const ids = await insertEntries(
      cloud.ctx,
      barrier,
      Array.from({ length: FAN_OUT_BATCH * 2 + 5 }, () => ({ holder, outcome: 'opened' as const })),
    );
    // Past the gap rule's grace, so that nothing is waited for.
    const later = { ...cloud.ctx, clock: { now: () => new Date(Date.now() + GAP_GRACE_MS * 2) } };
    await fanOutBacklog(later);
    const cursor = await cloud.ctx.db
      .selectFrom('push_journal_cursor')
      .select('last_entry_id')
      .executeTakeFirstOrThrow();
    expect(cursor.last_entry_id).toBe(ids.at(-1));
  });
});
