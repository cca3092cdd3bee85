import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jsonb } from '../../cloud/foundation/db/database.js';
import { addEndpoint } from '../../cloud/rules/events/endpoints.js';
import { ping } from '../../cloud/rules/events/event-data.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { EVENT_EXAMPLES } from '../../shared/company-api/events.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings } from '../support/event-company.js';
import { waitFor } from '../support/wait-for.js';

/**
 * What a commit that wrote events wakes (cloud/rules/events/events-notify.sql, docs/design.md section 6): the
 * event streams always; the delivery workers only when one of the events is for a company's callback (an address,
 * and a kind it takes), since otherwise their claim would find nothing to send. Saving an address wakes the workers for the
 * events held until then. Read off the notifications themselves, as the workers and the streams receive them.
 */
let database: TestDatabase;
let cloud: TestCloud;
const payloads: (string | undefined)[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
  database = await createTestDatabase();
  // No delivery worker runs, so nothing is sent anywhere; a loopback address may be saved.
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  unlisten = await database.listen!('gatelink_events', (payload) => payloads.push(payload));
});

afterAll(async () => {
  await unlisten?.();
  await cloud?.stop();
  await database?.close();
});

beforeEach(async () => {
  // Whatever an earlier commit or the connection itself sent is heard before this commit's notification, which
  // arrives last: the case begins after it.
  payloads.length = 0;
  await enqueuePings(cloud.ctx, await callbackCompany(cloud.ctx, 'Flush', null));
  await waitFor(() => payloads.includes('no_callback'), 'the flushing notification');
  payloads.length = 0;
});

async function heard(count: number): Promise<(string | undefined)[]> {
  await waitFor(() => payloads.length >= count, `${count} notifications`);
  return [...payloads];
}

describe('an event committed', () => {
  it('of a company without a callback address wakes the streams but not the delivery workers', async () => {
    const company = await callbackCompany(cloud.ctx, 'Reads its journal', null);
    await enqueuePings(cloud.ctx, company);
    expect(await heard(1)).toEqual(['no_callback']);
  });

  it('of a company with a callback address wakes the delivery workers', async () => {
    const company = await callbackCompany(cloud.ctx, 'Has an endpoint', 'https://hooks.example/in');
    await enqueuePings(cloud.ctx, company);
    expect(await heard(1)).toEqual(['']);
  });

  it('of a kind its callback does not take wakes the streams but not the delivery workers', async () => {
    const company = await callbackCompany(cloud.ctx, 'Takes openings only', 'https://hooks.example/in');
    await cloud.ctx.db
      .updateTable('companies')
      .set({ callback_kinds: ['open.succeeded'] })
      .where('id', '=', company)
      .execute();
    await cloud.ctx.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        companyId: company,
        type: 'key.expired',
        at: cloud.ctx.clock.now(),
        data: EVENT_EXAMPLES['key.expired'].data,
      }),
    );
    expect(await heard(1)).toEqual(['no_callback']);
  });

  it('in one statement with events of both kinds of company wakes the workers', async () => {
    const without = await callbackCompany(cloud.ctx, 'Without', null);
    const withAddress = await callbackCompany(cloud.ctx, 'With', 'https://hooks.example/in');
    const at = cloud.ctx.clock.now();
    await cloud.ctx.db
      .insertInto('events')
      .values(
        [without, withAddress].map((companyId) => ({
          id: crypto.randomUUID(),
          company_id: companyId,
          type: 'ping',
          data: jsonb(ping()),
          at,
          next_attempt_at: at,
        })),
      )
      .execute();
    expect(await heard(1)).toEqual(['']);
  });

  it('and an address saved afterwards wakes the workers for the events held until then', async () => {
    const company = await callbackCompany(cloud.ctx, 'Saves later', null);
    await cloud.ctx.db
      .transaction()
      .execute((trx) =>
        enqueueEvent(trx, { companyId: company, type: 'ping', at: cloud.ctx.clock.now(), data: ping() }),
      );
    await heard(1);
    await addEndpoint(cloud.ctx, company, 'https://127.0.0.1/in');
    expect(await heard(2)).toEqual(['no_callback', '']);
  });
});
