import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDuePushes } from '../../cloud/links/web-push/push-delivery.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import {
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { type BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';

/**
 * "Tell me" on a barrier's page (docs/design.md section 10.7): each person of the household chooses what they
 * are told of its openings, and the fan-out of the journal honours each choice apart. Entries are written
 * straight to the journal (the opening's own path has its suites) and told through a push service on loopback.
 */
const clock = new FakeClock(new Date('2026-11-27T14:02:00Z'));

let database: TestDatabase;
let cloud: TestCloud;
let service: TestPushService;
let owner: { id: number; client: BrowserClient };
let member: { id: number; client: BrowserClient };
let barrier: JournalBarrier;
let holder: KeyHolder;
let ownerPhone: BrowserSubscription;
let memberPhone: BrowserSubscription;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  service = new TestPushService();
  await service.start(cloud.ctx.vapid.publicKey);
  owner = await signedInCustomer(cloud, 'Olga Owner');
  member = await signedInCustomer(cloud, 'Max Member');
  barrier = await journalBarrier(cloud.ctx, owner.id, 'Front gate');
  holder = await keyHolder(cloud.ctx, { customerId: owner.id, barrier, name: 'Demo Cleaning Ltd' });
  // A member who may only look: being told is looking, so they choose too.
  await cloud.ctx.db
    .insertInto('barrier_members')
    .values({
      device_id: barrier.deviceId,
      customer_id: member.id,
      may_grant: false,
      added_by: owner.id,
      joined_at: clock.now(),
    })
    .execute();
  ownerPhone = await phoneOf(owner.id);
  memberPhone = await phoneOf(member.id);
});

afterEach(async () => {
  await cloud.ctx.db.deleteFrom('notification_choices').execute();
  service.received.length = 0;
});

afterAll(async () => {
  await service?.stop();
  await cloud?.stop();
  await database?.close();
});

async function phoneOf(customerId: number): Promise<BrowserSubscription> {
  const subscription = service.subscribe();
  await subscribe(cloud.ctx, {
    customerId,
    subscription,
    userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile',
  });
  return subscription;
}

/** Chooses on the barrier's page, as the person does: the page first, for its form's token. */
async function choose(client: BrowserClient, fields: Record<string, string>) {
  await client.get(`/barriers/${barrier.deviceId}`);
  return client.post(`/barriers/${barrier.deviceId}/notifications`, fields);
}

/** An opening and a refused attempt, then what each phone was told of them, by outcome. */
async function openedAndRefused(): Promise<{ owner: string[]; member: string[] }> {
  await insertEntries(cloud.ctx, barrier, [
    { holder, outcome: 'opened', actor: 'Driver 7' },
    { holder, outcome: 'forbidden', actor: 'Driver 8' },
  ]);
  await deliverDuePushes(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 5_000, random: () => 0.5 });
  const outcomes = (phone: BrowserSubscription) =>
    service.payloadsFor(phone).map((payload) => String(payload.outcome_code));
  return { owner: outcomes(ownerPhone), member: outcomes(memberPhone) };
}

describe('what each person is told', () => {
  it('is every opening until they choose, and the card says so', async () => {
    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);
    const text = visibleText(page.html);
    expect(text).toContain('Tell me');
    expect(text).toContain('Only refused attempts');
    expect(text).toContain('Also by e-mail');
    expect(page.html).toMatch(/<input type="radio" name="tell" value="every" checked/);

    expect(await openedAndRefused()).toEqual({
      owner: ['opened', 'forbidden'],
      member: ['opened', 'forbidden'],
    });
  });

  it('"Only refused attempts" tells a refused attempt and not an opening; the others keep theirs', async () => {
    const saved = await choose(owner.client, { tell: 'refused' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/barriers/${barrier.deviceId}?notifications=1`);
    const page = await owner.client.get(saved.location!);
    expect(visibleText(page.html)).toContain('Saved: you are told of Front gate as chosen below');
    expect(page.html).toMatch(/<input type="radio" name="tell" value="refused" checked/);

    expect(await openedAndRefused()).toEqual({ owner: ['forbidden'], member: ['opened', 'forbidden'] });
  });

  it('"Nothing", chosen by a member who may only look, tells them nothing and the owner all', async () => {
    expect((await choose(member.client, { tell: 'none' })).status).toBe(303);

    expect(await openedAndRefused()).toEqual({ owner: ['opened', 'forbidden'], member: [] });
    const memberPage = await member.client.get(`/barriers/${barrier.deviceId}`);
    expect(memberPage.html).toMatch(/<input type="radio" name="tell" value="none" checked/);
    const ownerPage = await owner.client.get(`/barriers/${barrier.deviceId}`);
    expect(ownerPage.html).toMatch(/<input type="radio" name="tell" value="every" checked/);
  });

  it('refuses a value the card never sends, and keeps the choice', async () => {
    await choose(owner.client, { tell: 'refused' });
    const forged: Record<string, string>[] = [{ tell: 'everything' }, {}, { tell: 'none', by_email: 'yes' }];
    for (const fields of forged) {
      const answer = await choose(owner.client, fields);
      expect(answer.status, JSON.stringify(fields)).toBe(400);
    }
    const rows = await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({ customer_id: owner.id, tell: 'refused', by_email: false }),
    ]);
  });

  it("[attack:web.notification-choice-foreign] a stranger's form for the barrier is 404 and changes nothing", async () => {
    await choose(owner.client, { tell: 'refused', by_email: '1' });
    const stranger = await signedInCustomer(cloud, 'Sam Stranger');
    await stranger.client.get('/barriers');

    const forged = await stranger.client.post(`/barriers/${barrier.deviceId}/notifications`, {
      tell: 'none',
    });

    expect(forged.status).toBe(404);
    expect(visibleText(forged.html)).toContain('No such barrier among yours.');
    const rows = await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({ customer_id: owner.id, tell: 'refused', by_email: true }),
    ]);
    expect(await openedAndRefused()).toEqual({ owner: ['forbidden'], member: ['opened', 'forbidden'] });
  });
});

describe('the alerts beyond openings on the card', () => {
  it('offers both boxes ticked to whoever never chose, and keeps each unticked for its reader alone', async () => {
    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toMatch(/<input type="checkbox" name="left_open" value="1" checked/);
    expect(page.html).toMatch(/<input type="checkbox" name="access_changes" value="1" checked/);
    expect(visibleText(page.html)).toContain('A gate left open');
    expect(visibleText(page.html)).toContain('Access granted or withdrawn by someone else');

    const saved = await choose(owner.client, { tell: 'every', alerts: '1', access_changes: '1' });
    expect(saved.status).toBe(303);
    const after = await owner.client.get(saved.location!);
    expect(after.html).not.toMatch(/name="left_open" value="1" checked/);
    expect(after.html).toMatch(/name="access_changes" value="1" checked/);
    const rows = await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({ customer_id: owner.id, left_open: false, access_changes: true }),
    ]);
    const memberPage = await member.client.get(`/barriers/${barrier.deviceId}`);
    expect(memberPage.html).toMatch(/name="left_open" value="1" checked/);
  });

  it("a form without the boxes (the previous release's card) keeps both on; a forged value is refused", async () => {
    expect((await choose(owner.client, { tell: 'every' })).status).toBe(303);
    expect(await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute()).toEqual([
      expect.objectContaining({ customer_id: owner.id, left_open: true, access_changes: true }),
    ]);
    const forged = await choose(owner.client, { tell: 'every', alerts: '1', left_open: 'yes' });
    expect(forged.status).toBe(400);
  });
});
