import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
import { COMPANY_CACHE_MS } from '../../cloud/rules/call-auth/company-cache.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { declineRequest } from '../../cloud/rules/requests/decline.js';
import { CROCKFORD_ALPHABET } from '../../shared/codes.js';
import { FakeClock } from '../support/clock.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Requests, their states and `status` (docs/design.md section 3), idempotent retries, and the refusals of
 * `open` that are decided before any controller is asked (docs/design.md section 4).
 */

const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let company: { org_id: number; secret: string };
let other: { org_id: number; secret: string };
let customerId: number;
let barrier: { deviceId: string; objects: { number_id: number; label: string }[] };

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  company = await secretCompany(cloud, 'Requests Ltd');
  other = await secretCompany(cloud, 'Other Ltd');
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
  barrier = await insertBarrier(customerId);
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/** A customer's controller with two objects, written straight to the database (no controller runs here). */
async function insertBarrier(customer: number) {
  const deviceId = `D${Array.from(randomBytes(10), (byte) => CROCKFORD_ALPHABET[byte % 32]).join('')}`;
  await cloud.ctx.db
    .insertInto('devices')
    .values({ id: deviceId, label: 'Yard', customer_id: customer, created_at: clock.now() })
    .execute();
  const objects = await cloud.ctx.db
    .insertInto('device_objects')
    .values([
      { device_id: deviceId, local_id: 'gate', label: 'Main gate', kind: 'relay' },
      { device_id: deviceId, local_id: 'door', label: 'Side door', kind: 'relay' },
    ])
    .returning(['id as number_id', 'label'])
    .execute();
  return { deviceId, objects };
}

/** `YYYY-MM-DD HH:MM:SS` in UTC. */
const stamp = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
const hoursFromNow = (hours: number) => new Date(clock.now().getTime() + hours * HOUR);

function expectRefused(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error: code });
  expect(answer.body.message).toBeTypeOf('string');
}

async function newRequest(body: Record<string, unknown> = {}, auth = company): Promise<string> {
  const answer = await cloud.call('request', { ...auth, ...body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.code as string;
}

async function status(code: string, auth = company): Promise<Answer> {
  return cloud.call('status', { ...auth, code });
}

/** A request taken through claim and grant; the key holds the first object only unless told. */
async function issuedKey(
  options: { keyExpiresAt?: Date; objectIds?: number[]; ref?: string; auth?: typeof company } = {},
) {
  const code = await newRequest(options.ref ? { ref: options.ref } : {}, options.auth);
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId: barrier.deviceId,
    objectIds: options.objectIds ?? [barrier.objects[0]!.number_id],
    keyExpiresAt: options.keyExpiresAt ?? null,
  });
  return { code, keyRef };
}

async function journalOf(keyRef: number) {
  return cloud.ctx.db
    .selectFrom('journal')
    .select(['outcome', 'actor', 'company_id', 'object_id'])
    .where('key_id', '=', keyRef)
    .orderBy('id')
    .execute();
}

async function requestCount(companyId: number): Promise<number> {
  const rows = await cloud.ctx.db
    .selectFrom('requests')
    .select('id')
    .where('company_id', '=', companyId)
    .execute();
  return rows.length;
}

describe('a=request', () => {
  it('without ttl_hours and ref: 24 hours, and a url of {base}/c/<code>', async () => {
    const now = clock.now();
    const answer = await cloud.call('request', { ...company });
    expect(answer.status).toBe(200);
    const code = answer.body.code as string;
    expect(answer.body).toEqual({
      code,
      url: `${cloud.baseUrl}/c/${code}`,
      expires_in_hours: 24,
      expires_at: stamp(new Date(now.getTime() + 24 * HOUR)),
    });
    expect(cloud.baseUrl).toMatch(/^http:\/\/localhost:\d+$/);
  });

  it('with ttl_hours and ref: both echoed, ref returned by status', async () => {
    const answer = await cloud.call('request', { ...company, ttl_hours: 720, ref: 'ORD-1001' });
    expect(answer.body).toMatchObject({ expires_in_hours: 720, expires_at: stamp(hoursFromNow(720)) });
    expect((await status(answer.body.code as string)).body.ref).toBe('ORD-1001');
    expect((await cloud.call('request', { ...company, ttl_hours: 1 })).body.expires_in_hours).toBe(1);
  });

  it.each([
    ['0', 0],
    ['721', 721],
    ['1.5', 1.5],
    ['"24" (a string)', '24'],
    ['-1', -1],
    ['null', null],
  ])('ttl_hours of %s answers 400 invalid_field', async (_label, ttl) => {
    const answer = await cloud.call('request', { ...company, ttl_hours: ttl });
    expectRefused(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('ttl_hours');
  });

  it.each([
    ['65 characters', 'R'.repeat(65)],
    ['a newline', 'ORD\n1'],
    ['a tab', 'ORD\t1'],
    ['a NUL', 'ORD\u00001'],
    ['DEL', 'ORD\u007f'],
    ['a C1 control', 'ORD\u0085'],
    ['an empty string', ''],
  ])('ref with %s answers 400 invalid_field', async (_label, ref) => {
    const answer = await cloud.call('request', { ...company, ref });
    expectRefused(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('ref');
  });

  it('ref of 64 printable characters, unicode included, is accepted and need not be unique', async () => {
    const ref = `Bestellung Zürich ${'x'.repeat(46)}`;
    expect(ref).toHaveLength(64);
    const first = await newRequest({ ref });
    const second = await newRequest({ ref });
    expect(first).not.toBe(second);
    expect((await status(first)).body.ref).toBe(ref);
  });

  it('[attack:request.code-guessing] the code is 12 Crockford base32 characters, different every time', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 20; i++) codes.add(await newRequest());
    expect(codes.size).toBe(20);
    for (const code of codes) expect(code).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{12}$/);
  });
});

describe('a=status: a field appears once it has a value', () => {
  it('new: code, state, ref and expires_at', async () => {
    const code = await newRequest({ ref: 'S-NEW', ttl_hours: 5 });
    const answer = await status(code);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ code, state: 'new', ref: 'S-NEW', expires_at: stamp(hoursFromNow(5)) });
  });

  it('new without ref: no ref field', async () => {
    const code = await newRequest();
    expect(Object.keys((await status(code)).body).sort()).toEqual(['code', 'expires_at', 'state']);
  });

  it('claimed: claimed_at added', async () => {
    const code = await newRequest({ ref: 'S-CLAIMED' });
    const expiresAt = stamp(hoursFromNow(24));
    clock.advance(60_000);
    await claimRequest(cloud.ctx, { code, customerId });
    expect((await status(code)).body).toEqual({
      code,
      state: 'claimed',
      ref: 'S-CLAIMED',
      expires_at: expiresAt,
      claimed_at: stamp(clock.now()),
    });
  });

  it('issued: key_ref, issued_at and numbers added, no key_expires_at for a key until revoked', async () => {
    const code = await newRequest({ ref: 'S-ISSUED' });
    const expiresAt = stamp(hoursFromNow(24));
    await claimRequest(cloud.ctx, { code, customerId });
    const claimedAt = stamp(clock.now());
    clock.advance(60_000);
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: barrier.deviceId,
      objectIds: barrier.objects.map((object) => object.number_id),
      keyExpiresAt: null,
    });
    expect((await status(code)).body).toEqual({
      code,
      state: 'issued',
      ref: 'S-ISSUED',
      expires_at: expiresAt,
      claimed_at: claimedAt,
      key_ref: keyRef,
      issued_at: stamp(clock.now()),
      numbers: [
        { number_id: barrier.objects[0]!.number_id, label: 'Main gate' },
        { number_id: barrier.objects[1]!.number_id, label: 'Side door' },
      ],
    });
  });

  it('issued with an end date: key_expires_at added', async () => {
    const end = new Date(Math.floor(hoursFromNow(48).getTime() / 1000) * 1000);
    const { code } = await issuedKey({ keyExpiresAt: end });
    const answer = await status(code);
    expect(answer.body).toMatchObject({ state: 'issued', key_expires_at: stamp(end) });
    expect(answer.body.numbers).toEqual([{ number_id: barrier.objects[0]!.number_id, label: 'Main gate' }]);
  });

  it('revoked: state revoked and revoked_at added, the key fields kept', async () => {
    const { code, keyRef } = await issuedKey({ ref: 'S-REVOKED' });
    clock.advance(60_000);
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    const answer = await status(code);
    expect(answer.body).toMatchObject({ state: 'revoked', key_ref: keyRef, revoked_at: stamp(clock.now()) });
    expect(Object.keys(answer.body).sort()).toEqual(
      [
        'claimed_at',
        'code',
        'expires_at',
        'issued_at',
        'key_ref',
        'numbers',
        'ref',
        'revoked_at',
        'state',
      ].sort(),
    );
  });

  it('declined: state declined and declined_at added, and nothing of the customer', async () => {
    const code = await newRequest({ ref: 'S-DECLINED' });
    const expiresAt = stamp(hoursFromNow(24));
    await claimRequest(cloud.ctx, { code, customerId });
    const claimedAt = stamp(clock.now());
    clock.advance(60_000);
    await declineRequest(cloud.ctx, { code, customerId });
    expect((await status(code)).body).toEqual({
      code,
      state: 'declined',
      ref: 'S-DECLINED',
      expires_at: expiresAt,
      claimed_at: claimedAt,
      declined_at: stamp(clock.now()),
    });
  });

  it('every timestamp is YYYY-MM-DD HH:MM:SS', async () => {
    const { code } = await issuedKey({ keyExpiresAt: hoursFromNow(10) });
    const body = (await status(code)).body;
    for (const field of ['expires_at', 'claimed_at', 'issued_at', 'key_expires_at']) {
      expect(body[field]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
  });
});

describe('expiry', () => {
  async function expiredEvents(code: string) {
    const rows = await cloud.ctx.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'request.expired')
      .execute();
    return rows
      .map((row) => ({
        type: row.type,
        data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
      }))
      .filter((row) => row.data.code === code);
  }

  async function storedState(code: string) {
    return cloud.ctx.db
      .selectFrom('requests')
      .select(['state', 'expired_at', 'expires_at'])
      .where('code', '=', code)
      .executeTakeFirstOrThrow();
  }

  it('from new and from claimed: computed at read time, then recorded by the sweep with its event', async () => {
    const fresh = await newRequest({ ttl_hours: 1, ref: 'EXP-NEW' });
    const claimed = await newRequest({ ttl_hours: 1, ref: 'EXP-CLAIMED' });
    await claimRequest(cloud.ctx, { code: claimed, customerId });

    clock.advance(HOUR - 1000);
    expect((await status(fresh)).body.state).toBe('new');
    expect((await status(claimed)).body.state).toBe('claimed');

    clock.advance(1000);
    expect((await status(fresh)).body.state).toBe('expired');
    expect((await status(claimed)).body).toMatchObject({ state: 'expired', claimed_at: expect.any(String) });
    // Not recorded yet: only the read says so.
    expect((await storedState(fresh)).state).toBe('new');
    expect((await storedState(claimed)).state).toBe('claimed');
    expect(await expiredEvents(fresh)).toEqual([]);

    await sweepExpired(cloud.ctx);
    for (const [code, ref] of [
      [fresh, 'EXP-NEW'],
      [claimed, 'EXP-CLAIMED'],
    ] as const) {
      const stored = await storedState(code);
      expect(stored.state).toBe('expired');
      expect(stored.expired_at?.getTime()).toBe(stored.expires_at.getTime());
      expect((await status(code)).body.state).toBe('expired');
      const events = await expiredEvents(code);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ code, ref, state: 'expired' });
    }

    // A second sweep records nothing twice.
    await sweepExpired(cloud.ctx);
    expect(await expiredEvents(fresh)).toHaveLength(1);
    expect(await expiredEvents(claimed)).toHaveLength(1);
  });

  it('a declined request keeps its state past its lifetime, and the sweep leaves it alone', async () => {
    const code = await newRequest({ ttl_hours: 1, ref: 'EXP-DECLINED' });
    await claimRequest(cloud.ctx, { code, customerId });
    await declineRequest(cloud.ctx, { code, customerId });
    clock.advance(2 * HOUR);
    expect((await status(code)).body.state).toBe('declined');
    await sweepExpired(cloud.ctx);
    const stored = await storedState(code);
    expect(stored.state).toBe('declined');
    expect(stored.expired_at).toBeNull();
    expect((await status(code)).body.state).toBe('declined');
    expect(await expiredEvents(code)).toEqual([]);
  });

  it('an issued request does not expire with the request lifetime', async () => {
    const code = await newRequest({ ttl_hours: 1 });
    await claimRequest(cloud.ctx, { code, customerId });
    await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: barrier.deviceId,
      objectIds: [barrier.objects[0]!.number_id],
      keyExpiresAt: null,
    });
    clock.advance(2 * HOUR);
    await sweepExpired(cloud.ctx);
    expect((await status(code)).body.state).toBe('issued');
    expect(await expiredEvents(code)).toEqual([]);
  });
});

describe('declining', () => {
  async function declinedEvents(code: string) {
    const rows = await cloud.ctx.db
      .selectFrom('events')
      .select(['type', 'data', 'company_id'])
      .where('type', '=', 'request.declined')
      .execute();
    return rows
      .map((row) => ({
        companyId: row.company_id,
        data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
      }))
      .filter((row) => row.data.code === code);
  }

  it('ends a claimed request with one event, and then it can be neither claimed, granted nor declined again', async () => {
    const code = await newRequest({ ref: 'DEC-1' });
    await claimRequest(cloud.ctx, { code, customerId });
    const declined = await declineRequest(cloud.ctx, { code, customerId });
    expect(declined.state).toBe('declined');
    expect(await declinedEvents(code)).toEqual([
      {
        companyId: company.org_id,
        data: { code, ref: 'DEC-1', state: 'declined', declined_at: stamp(clock.now()) },
      },
    ]);

    // Each tried in turn: a refusal made before its expect would be an unhandled rejection meanwhile.
    const refusals = [
      () => claimRequest(cloud.ctx, { code, customerId }),
      () =>
        issueAccessKey(cloud.ctx, {
          code,
          customerId,
          deviceId: barrier.deviceId,
          objectIds: [barrier.objects[0]!.number_id],
          keyExpiresAt: null,
        }),
      () => declineRequest(cloud.ctx, { code, customerId }),
    ];
    for (const refused of refusals) await expect(refused()).rejects.toMatchObject({ code: 'invalid_state' });
    expect((await status(code)).body).not.toHaveProperty('key_ref');
    expect(await declinedEvents(code)).toHaveLength(1);
  });

  it('is refused to another customer, and on a new, issued or expired request, changing nothing', async () => {
    const stranger = (await createCustomer(cloud.ctx, { displayName: 'Stranger' })).id;
    const claimed = await newRequest();
    await claimRequest(cloud.ctx, { code: claimed, customerId });
    const fresh = await newRequest();
    const { code: issued } = await issuedKey();
    const lapsed = await newRequest({ ttl_hours: 1 });
    await claimRequest(cloud.ctx, { code: lapsed, customerId });
    clock.advance(HOUR);
    const attempts: [string, number, string][] = [
      [claimed, stranger, 'claimed'],
      [fresh, customerId, 'new'],
      [issued, customerId, 'issued'],
      [lapsed, customerId, 'expired'],
    ];
    for (const [code, who, state] of attempts) {
      await expect(declineRequest(cloud.ctx, { code, customerId: who })).rejects.toMatchObject({
        code: 'invalid_state',
      });
      expect((await status(code)).body.state, state).toBe(state);
      expect(await declinedEvents(code)).toEqual([]);
    }
  });
});

describe('[attack:request.code-guessing] codes that are not yours', () => {
  it("another company's code and an unknown code both answer 404 not_found, indistinguishably", async () => {
    const theirs = (await cloud.call('request', { ...other })).body.code as string;
    const foreign = await status(theirs);
    const unknown = await status('ZZZZZZZZZZZZ');
    const malformed = await status('not-a-code');
    expectRefused(foreign, 404, 'not_found');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(foreign.body);
    expect(malformed.body).toEqual(foreign.body);
    // The owner sees it.
    expect((await status(theirs, other)).status).toBe(200);
  });

  it('a lowercase code is accepted', async () => {
    const code = await newRequest({ ref: 'lower' });
    const answer = await status(code.toLowerCase());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code, ref: 'lower' });
  });

  it('a code typed in groups of four with hyphens is accepted', async () => {
    const code = await newRequest({ ref: 'grouped' });
    const grouped = code.match(/.{4}/g)!.join('-');
    expect((await status(grouped)).body).toMatchObject({ code, ref: 'grouped' });
  });
});

describe('Idempotency-Key on a=request', () => {
  it('the same key and body return the same code, and only one request is made', async () => {
    const key = `order-${randomBytes(8).toString('hex')}`;
    const before = await requestCount(company.org_id);
    const first = await cloud.call('request', { ...company, ref: 'IDEM' }, { 'idempotency-key': key });
    const second = await cloud.call('request', { ...company, ref: 'IDEM' }, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await requestCount(company.org_id)).toBe(before + 1);
  });

  it('[attack:idempotency.body-swap] the same key with another body answers 422 idempotency_conflict', async () => {
    const key = `order-${randomBytes(8).toString('hex')}`;
    expect((await cloud.call('request', { ...company, ref: 'A' }, { 'idempotency-key': key })).status).toBe(
      200,
    );
    const before = await requestCount(company.org_id);
    expectRefused(
      await cloud.call('request', { ...company, ref: 'B' }, { 'idempotency-key': key }),
      422,
      'idempotency_conflict',
    );
    expect(await requestCount(company.org_id)).toBe(before);
  });

  it('different companies may use the same key', async () => {
    const key = `shared-${randomBytes(8).toString('hex')}`;
    const mine = await cloud.call('request', { ...company, ref: 'SAME' }, { 'idempotency-key': key });
    const theirs = await cloud.call('request', { ...other, ref: 'SAME' }, { 'idempotency-key': key });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.body.code).not.toBe(mine.body.code);
    expect((await status(theirs.body.code as string, other)).status).toBe(200);
  });

  it('without the header, every call makes a new request', async () => {
    const first = await cloud.call('request', { ...company, ref: 'PLAIN' });
    const second = await cloud.call('request', { ...company, ref: 'PLAIN' });
    expect(first.body.code).not.toBe(second.body.code);
  });

  it('after 24 hours the key is forgotten', async () => {
    const key = `late-${randomBytes(8).toString('hex')}`;
    const first = await cloud.call('request', { ...company, ref: 'LATE' }, { 'idempotency-key': key });
    clock.advance(24 * HOUR - 1000);
    expect(
      (await cloud.call('request', { ...company, ref: 'LATE' }, { 'idempotency-key': key })).body.code,
    ).toBe(first.body.code);
    clock.advance(1000);
    const later = await cloud.call('request', { ...company, ref: 'LATE' }, { 'idempotency-key': key });
    expect(later.status).toBe(200);
    expect(later.body.code).not.toBe(first.body.code);
  });

  it('a key that is not visible ASCII answers 400 invalid_field', async () => {
    const answer = await cloud.call('request', { ...company }, { 'idempotency-key': 'has space' });
    expectRefused(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('Idempotency-Key');
  });
});

describe('a=open refusals decided before the controller is asked', () => {
  const open = (body: Record<string, unknown>, auth = company) => cloud.call('open', { ...auth, ...body });

  it.each([
    ['missing', {}],
    ['null', { actor: null }],
    ['empty', { actor: '' }],
    ['blank', { actor: '   \t ' }],
  ])('an actor that is %s answers 400 actor_required', async (_label, actor) => {
    const { keyRef } = await issuedKey();
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, ...actor }),
      400,
      'actor_required',
    );
    expect(await journalOf(keyRef)).toEqual([]);
  });

  it('actor_required comes before every other check of the body', async () => {
    expectRefused(await open({ key_ref: 'x', number_id: -1 }), 400, 'actor_required');
  });

  it.each([
    ['129 characters', 'A'.repeat(129)],
    ['a control character', 'Anna\u0007'],
    ['a newline inside', 'Anna\nBob'],
    ['a right-to-left override that disguises the name', 'Anna \u202eboB'],
  ])('an actor with %s answers 400 invalid_field', async (_label, actor) => {
    const { keyRef } = await issuedKey();
    const answer = await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor });
    expectRefused(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('actor');
    expect(await journalOf(keyRef)).toEqual([]);
  });

  it('a number_id beyond the integer range answers 400 invalid_field', async () => {
    const { keyRef } = await issuedKey();
    const answer = await open({ key_ref: keyRef, number_id: 2 ** 31, actor: 'Anna' });
    expectRefused(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('number_id');
  });

  it("another company's key_ref answers 403 forbidden and leaves no journal entry", async () => {
    const { keyRef } = await issuedKey();
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Mallory' }, other),
      403,
      'forbidden',
    );
    expect(await journalOf(keyRef)).toEqual([]);
  });

  it('[attack:open.foreign-key] an unknown key_ref answers 403 forbidden, like a foreign one', async () => {
    const answer = await open({ key_ref: 1_999_999_999, number_id: 1, actor: 'Anna' });
    expectRefused(answer, 403, 'forbidden');
  });

  it('[attack:open.after-revocation] a revoked key answers 403 revoked and the attempt is journalled', async () => {
    const { keyRef } = await issuedKey();
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Driver 12' }),
      403,
      'revoked',
    );
    expect(await journalOf(keyRef)).toEqual([
      {
        outcome: 'revoked',
        actor: 'Driver 12',
        company_id: company.org_id,
        object_id: barrier.objects[0]!.number_id,
      },
    ]);
  });

  it('[attack:open.after-revocation] a key past its end answers 403 expired, is journalled, and status stays issued', async () => {
    const end = hoursFromNow(1);
    const { code, keyRef } = await issuedKey({ keyExpiresAt: end });
    clock.advance(HOUR);
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: '  Night shift  ' }),
      403,
      'expired',
    );
    expect(await journalOf(keyRef)).toEqual([
      {
        outcome: 'expired',
        actor: 'Night shift',
        company_id: company.org_id,
        object_id: barrier.objects[0]!.number_id,
      },
    ]);
    expect((await status(code)).body).toMatchObject({ state: 'issued', key_expires_at: stamp(end) });
  });

  it('[attack:open.foreign-key] an object not in the key answers 403 forbidden and the attempt is journalled', async () => {
    const { keyRef } = await issuedKey({ objectIds: [barrier.objects[0]!.number_id] });
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[1]!.number_id, actor: 'Anna' }),
      403,
      'forbidden',
    );
    expect(await journalOf(keyRef)).toEqual([
      { outcome: 'forbidden', actor: 'Anna', company_id: company.org_id, object_id: null },
    ]);
  });

  it('[attack:open.queued-for-later] a controller that is not connected answers 503 device_offline, journalled, with nothing queued', async () => {
    const { keyRef } = await issuedKey();
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' }),
      503,
      'device_offline',
    );
    expect(await journalOf(keyRef)).toEqual([
      {
        outcome: 'device_offline',
        actor: 'Anna',
        company_id: company.org_id,
        object_id: barrier.objects[0]!.number_id,
      },
    ]);
  });

  it('[attack:open.rate-limit] the 11th attempt with one key within a minute answers 429 rate_limit with Retry-After', async () => {
    const { keyRef } = await issuedKey();
    const attempt = () => open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' });
    for (let i = 0; i < 10; i++) expect((await attempt()).status).toBe(503);
    const limited = await attempt();
    expectRefused(limited, 429, 'rate_limit');
    expect(limited.headers['retry-after']).toBe('60');
    const outcomes = (await journalOf(keyRef)).map((entry) => entry.outcome);
    expect(outcomes).toEqual([...Array<string>(10).fill('device_offline'), 'rate_limit']);
    // Another key of the same company is not limited.
    const { keyRef: otherKey } = await issuedKey();
    expect(
      (await open({ key_ref: otherKey, number_id: barrier.objects[0]!.number_id, actor: 'Anna' })).status,
    ).toBe(503);
    // A minute later the key may be used again.
    clock.advance(60_000);
    expect((await attempt()).status).toBe(503);
  });

  it('[attack:fuzz.company-api] a rate-limited open with an Idempotency-Key keeps Retry-After, and the same key runs again after it', async () => {
    const { keyRef } = await issuedKey();
    const body = { key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' };
    for (let i = 0; i < 10; i++) expect((await open(body)).status).toBe(503);
    const retry = () =>
      cloud.call('open', { ...company, ...body }, { 'idempotency-key': `limited-${keyRef}` });
    for (const limited of [await retry(), await retry()]) {
      expectRefused(limited, 429, 'rate_limit');
      expect(limited.headers['retry-after']).toBe('60');
    }
    clock.advance(60_000);
    const later = await retry();
    expectRefused(later, 503, 'device_offline');
    // That outcome is the one kept for the key.
    expect((await retry()).body).toEqual(later.body);
    const outcomes = (await journalOf(keyRef)).map((entry) => entry.outcome);
    expect(outcomes).toEqual([
      ...Array<string>(10).fill('device_offline'),
      'rate_limit',
      'rate_limit',
      'device_offline',
    ]);
  });

  it('[attack:open.rate-limit] refusals do not count against the limit; Retry-After says when the oldest counted attempt leaves the minute', async () => {
    const { keyRef } = await issuedKey();
    const attempt = () => open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' });
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(503);
    clock.advance(20_000);
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(503);
    for (let i = 0; i < 20; i++) expectRefused(await attempt(), 429, 'rate_limit');
    expect((await attempt()).headers['retry-after']).toBe('40');
    // The first five have left the minute; the 21 refusals in it do not count.
    clock.advance(40_000);
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(503);
    const limited = await attempt();
    expectRefused(limited, 429, 'rate_limit');
    expect(limited.headers['retry-after']).toBe('20');
  });

  it('[attack:open.rate-limit] 16 attempts at once with one key: exactly 10 get through, the rest answer 429', async () => {
    // On PostgreSQL these run on separate connections at the same time: the count must see the others.
    const { keyRef } = await issuedKey();
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(6).fill(429), ...Array<number>(10).fill(503)]);
    const outcomes = (await journalOf(keyRef)).map((entry) => entry.outcome).sort();
    expect(outcomes).toEqual([
      ...Array<string>(10).fill('device_offline'),
      ...Array<string>(6).fill('rate_limit'),
    ]);
  });

  it('[attack:auth.unapproved-company] suspended through another instance: openings are refused at once, other calls within the cache lifetime', async () => {
    const suspended = await secretCompany(cloud, 'Suspended Elsewhere Ltd');
    const { code, keyRef } = await issuedKey({ auth: suspended });
    const attempt = () =>
      open({ key_ref: keyRef, number_id: barrier.objects[0]!.number_id, actor: 'Anna' }, suspended);
    // This instance has now authenticated the company and remembers it.
    expect((await attempt()).status).toBe(503);
    const second = await startTestCloud({ database, clock });
    try {
      expect((await second.ops('POST', `/ops/companies/${suspended.org_id}/suspend`)).status).toBe(200);
    } finally {
      await second.stop();
    }
    expectRefused(await attempt(), 403, 'org_not_approved');
    // Refused before any check of the key: nothing more in the customer's journal.
    expect((await journalOf(keyRef)).map((entry) => entry.outcome)).toEqual(['device_offline']);
    clock.advance(COMPANY_CACHE_MS);
    expectRefused(await cloud.call('status', { ...suspended, code }), 403, 'org_not_approved');
  });

  it('revoked is answered before the object check', async () => {
    const { keyRef } = await issuedKey({ objectIds: [barrier.objects[0]!.number_id] });
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    expectRefused(
      await open({ key_ref: keyRef, number_id: barrier.objects[1]!.number_id, actor: 'Anna' }),
      403,
      'revoked',
    );
  });
});
