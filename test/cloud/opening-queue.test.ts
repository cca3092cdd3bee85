import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { OpeningQueue } from '../../cloud/rules/opening/opening-queue.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { ApiError } from '../../shared/errors.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier, type SecretAuth } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The bounded queue of openings (docs/design.md section 7.6): past `OPEN_QUEUE_LIMIT` openings under way, one
 * more is answered 503 `overloaded` with Retry-After at once and writes nothing; one company holds
 * at most half of the places, so another company's opening still gets in; an Idempotency-Key refused so is not
 * claimed, and its retry runs.
 */
describe('the opening queue', () => {
  function refusal(enter: () => unknown): ApiError {
    try {
      enter();
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    throw new Error('expected overloaded');
  }

  it('takes up to its limit, at most half of it for one company, and frees a place once left', () => {
    const queue = new OpeningQueue(4);
    const first = queue.enter(1);
    queue.enter(1);
    const refused = refusal(() => queue.enter(1));
    expect(refused.code).toBe('overloaded');
    expect(refused.status).toBe(503);
    expect(refused.headers).toEqual({ 'retry-after': '1' });
    queue.enter(2);
    queue.enter(3);
    expect(queue.waiting).toBe(4);
    expect(refusal(() => queue.enter(4)).code).toBe('overloaded');
    first();
    first();
    expect(queue.waiting).toBe(3);
    queue.enter(1);
    expect(refusal(() => queue.enter(5)).code).toBe('overloaded');
  });
});

describe('openings past the queue, over HTTP', () => {
  let database: TestDatabase;
  let cloud: TestCloud;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { OPEN_QUEUE_LIMIT: '4' } });
  });

  afterAll(async () => {
    await cloud?.stop();
    await database?.close();
  });

  /** A company with a key on an offline barrier, and its `open` (which answers `device_offline`). */
  async function companyWithKey(name: string) {
    const customerId = (await createCustomer(cloud.ctx, { displayName: `${name} customer` })).id;
    const barrier = await insertBarrier(cloud, customerId, { labels: ['Gate'], online: false });
    const company: SecretAuth = await secretCompany(cloud, name);
    const code = (await cloud.call('request', company)).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    const numberId = barrier.objects[0]!.number_id;
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: barrier.deviceId,
      objectIds: [numberId],
      keyExpiresAt: null,
    });
    const open = (headers?: Record<string, string>): Promise<Answer> =>
      cloud.call(
        'open',
        { ...company, key_ref: keyRef, number_id: numberId, actor: `${name} driver` },
        headers,
      );
    // Once, so that its authentication is cached and the openings below wait only on the key's lock.
    expect((await open()).body.error).toBe('device_offline');
    return { keyRef, open };
  }

  async function entriesOf(keyRef: number): Promise<number> {
    const rows = await cloud.ctx.db.selectFrom('journal').select('id').where('key_id', '=', keyRef).execute();
    return rows.length;
  }

  it('answers overloaded at once past the bound, writes nothing for it, and lets another company in [attack:open.flood-starves-others]', async () => {
    const busy = await companyWithKey('Burst Couriers');
    const other = await companyWithKey('Quiet Cleaners');
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = false;
    // The key's row held, as a long transaction would: this company's openings wait in open_attempt.
    const holding = cloud.ctx.db.transaction().execute(async (trx) => {
      await sql`select id from keys where id = ${busy.keyRef} for update`.execute(trx);
      locked = true;
      await released;
    });
    await waitFor(() => locked, 'the key to be locked');
    const waiting = [busy.open(), busy.open()];
    // Both have their places before the third comes: the queue's gauge says so.
    await waitFor(
      async () => (await cloud.ctx.metrics.gaugeValue('openings_queued')) === 2,
      'two openings to wait in the queue',
    );
    const overloaded = await busy.open({ 'idempotency-key': 'burst-3' });
    expect(overloaded.status).toBe(503);
    expect(overloaded.body.error).toBe('overloaded');
    expect(overloaded.headers['retry-after']).toBe('1');
    const otherAnswer = other.open();
    release();
    await holding;
    for (const answer of await Promise.all(waiting)) expect(answer.body.error).toBe('device_offline');
    expect((await otherAnswer).body.error).toBe('device_offline');
    // The refused opening left nothing: the first call, then the two that waited.
    expect(await entriesOf(busy.keyRef)).toBe(3);
    // Its Idempotency-Key was not claimed: the retry runs, and is answered as any opening.
    const retried = await busy.open({ 'idempotency-key': 'burst-3' });
    expect(retried.body.error).toBe('device_offline');
    expect(await entriesOf(busy.keyRef)).toBe(4);
  });
});
