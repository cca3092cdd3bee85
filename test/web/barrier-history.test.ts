import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actWords } from '../../cloud/faces/customer-pages/access-history-card.js';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { randomCode } from '../../shared/codes.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
  type TestBarrier,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A barrier's history (docs/design.md section 10.4): every grant, change of shape and withdrawal is recorded in
 * its own transaction with who did it and for which company, and the barrier's page lists them newest first, to
 * its customer only.
 */
const clock = new FakeClock(Date.parse('2026-11-27T10:02:00Z'));
let database: TestDatabase;
let cloud: TestCloud;
let cleaners: SecretAuth;
let plumbers: SecretAuth;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  cleaners = await secretCompany(cloud, 'Demo Cleaning Ltd');
  plumbers = await secretCompany(cloud, 'Quick Plumbers');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

beforeEach(() => clock.advance(CODE_LOOKUPS.windowMs));

const text = visibleText;

/** The customer grants `company` the barrier's first object until withdrawn; returns its key_ref. */
async function granted(
  customer: Awaited<ReturnType<typeof signedInCustomer>>,
  barrier: TestBarrier,
  company: SecretAuth,
): Promise<number> {
  const code = await companyRequest(cloud, company);
  await customer.client.get(`/c/${code}`);
  await customer.client.post(`/c/${code}/claim`);
  await customer.client.get(`/c/${code}`);
  const answer = await customer.client.post(`/c/${code}/grant`, {
    object: String(barrier.objects[0]!.number_id),
    lifetime: 'withdrawn',
  });
  expect(answer.location).toBe(`/c/${code}?granted=1`);
  return (await companyStatus(cloud, company, code)).body.key_ref as number;
}

async function historyRows(deviceId: string) {
  return cloud.ctx.db
    .selectFrom('access_history')
    .select(['act', 'customer_id', 'company_id', 'key_id', 'at'])
    .where('device_id', '=', deviceId)
    .orderBy('id')
    .execute();
}

describe("a barrier's history", () => {
  it('records grant, change of shape and withdrawal with the customer and company, and lists them newest first', async () => {
    const anna = await signedInCustomer(cloud, 'Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const grantedAt = clock.now();
    const keyRef = await granted(anna, barrier, cleaners);

    clock.advance(60_000);
    const reshapedAt = clock.now();
    const shaped = await anna.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/shape`, {
      hours: 'windows',
      w0_days: ['mon'],
      w0_from: '08:00',
      w0_to: '12:00',
      start: 'now',
      openings: 'any',
      lifetime: 'withdrawn',
    });
    expect(shaped.status).toBe(303);

    clock.advance(60_000);
    const withdrawnAt = clock.now();
    const page = await anna.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toContain('History');
    expect((await anna.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`)).status).toBe(
      303,
    );

    const rows = await historyRows(barrier.deviceId);
    const expected = { customer_id: anna.id, company_id: cleaners.org_id, key_id: keyRef };
    expect(rows).toEqual([
      { ...expected, act: 'granted', at: grantedAt },
      { ...expected, act: 'reshaped', at: reshapedAt },
      { ...expected, act: 'withdrawn', at: withdrawnAt },
    ]);

    const shown = await anna.client.get(`/barriers/${barrier.deviceId}`);
    const card =
      /<section[^>]*aria-labelledby="history-title"[\s\S]*?<\/section>/.exec(shown.html)?.[0] ?? '';
    const lines = [...card.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((match) => plain(match[1]!));
    expect(lines).toEqual([
      `${momentUtc(withdrawnAt)}: Anna Owner withdrew Demo Cleaning Ltd's access`,
      `${momentUtc(reshapedAt)}: Anna Owner changed when Demo Cleaning Ltd may open`,
      `${momentUtc(grantedAt)}: Anna Owner gave Demo Cleaning Ltd access`,
    ]);
    expect(card).toContain(`<time datetime="${withdrawnAt.toISOString()}">`);
  });

  it('shows the latest 20, and only to the barrier’s customer', async () => {
    const owner = await signedInCustomer(cloud, 'Olga Owner');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Holiday flat' });
    for (let i = 0; i < 11; i += 1) {
      clock.advance(CODE_LOOKUPS.windowMs);
      const keyRef = await granted(owner, barrier, i % 2 === 0 ? cleaners : plumbers);
      clock.advance(1000);
      await owner.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    }
    expect(await historyRows(barrier.deviceId)).toHaveLength(22);
    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);
    const card = /<section[^>]*aria-labelledby="history-title"[\s\S]*?<\/section>/.exec(page.html)?.[0] ?? '';
    const lines = [...card.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((match) => plain(match[1]!));
    expect(lines).toHaveLength(20);
    expect(lines[0]).toContain("Olga Owner withdrew Demo Cleaning Ltd's access");
    expect(lines[1]).toContain('Olga Owner gave Demo Cleaning Ltd access');
    expect(text(card)).toContain('The latest 20 changes.');

    const stranger = await signedInCustomer(cloud, 'Nosy Neighbour');
    const foreign = await stranger.client.get(`/barriers/${barrier.deviceId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.html).not.toContain('Olga Owner');
    expect(foreign.html).not.toContain('history-title');
  });

  it('a controller that changes hands records its keys ended by no customer, and shows its new owner none of them', async () => {
    const before = await signedInCustomer(cloud, 'Paula Previous');
    const barrier = await insertBarrier(cloud, before.id, { name: 'Old home' });
    const keyRef = await granted(before, barrier, cleaners);
    const code = randomCode(8);
    await cloud.ctx.db
      .updateTable('devices')
      .set({ pairing_code: code, pairing_expires_at: new Date(clock.now().getTime() + 3600_000) })
      .where('id', '=', barrier.deviceId)
      .execute();
    const next = await signedInCustomer(cloud, 'Nina Next');
    clock.advance(1000);
    await pairDevice(cloud.ctx, { customerId: next.id, pairingCode: code, name: 'New home' });

    const rows = await historyRows(barrier.deviceId);
    expect(rows.map(({ act, customer_id, key_id }) => ({ act, customer_id, key_id }))).toEqual([
      { act: 'granted', customer_id: before.id, key_id: keyRef },
      { act: 'withdrawn', customer_id: null, key_id: keyRef },
    ]);
    const page = await next.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.status).toBe(200);
    const card = /<section[^>]*aria-labelledby="history-title"[\s\S]*?<\/section>/.exec(page.html)?.[0] ?? '';
    expect(text(card)).toContain('No company has been given access to this barrier yet.');
    expect(page.html).not.toContain('Paula Previous');
    expect(actWords({ at: clock.now(), act: 'withdrawn', by: null, company: 'Demo Cleaning Ltd' })).toBe(
      "Demo Cleaning Ltd's access ended when the controller changed hands or was replaced",
    );
  });
});

/** A line's text as it reads, its time element's words included. */
function plain(html: string): string {
  return html.replace(/<[^>]+>/g, '').replace(/&#x27;|&#39;/g, "'");
}

/** "27 Nov 2026, 10:02 UTC", as a reader without a zone of their own reads it. */
function momentUtc(date: Date): string {
  const day = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'UTC',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  }).format(date);
  return `${day}, ${date.toISOString().slice(11, 16)} UTC`;
}
