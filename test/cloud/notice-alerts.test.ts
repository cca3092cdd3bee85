import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDueMails } from '../../cloud/links/mail/opening-mail-delivery.js';
import { deliverDuePushes } from '../../cloud/links/web-push/push-delivery.js';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
import { removeMember } from '../../cloud/rules/households/members.js';
import { DEFAULT_CHOICE, setChoice } from '../../cloud/rules/notification-choices/choices.js';
import { sweepGates, sweepLeftOpen } from '../../cloud/rules/positions/gate-sweeps.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { createRequest } from '../../cloud/rules/requests/requests.js';
import {
  grantKey,
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { sensorOn, writeSteps } from '../support/gate-steps.js';
import { type ReceivedMail, startMailServer, type TestMailServer } from '../support/mail-server.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';

/**
 * Notices beyond openings (docs/design.md section 10.7), end to end on a fake clock: a gate the sweep marks left
 * open, then closed again by its position report, and access granted or withdrawn by someone of the household.
 * Pushes go to a push service on loopback that checks VAPID and decrypts each payload with the browser's keys;
 * e-mails to a real SMTP server on loopback.
 */
const clock = new FakeClock(new Date('2026-11-27T14:00:00Z'));
const OWNER_ADDRESS = 'olga@example.com';
const MIN = 60_000;

let database: TestDatabase;
let mail: TestMailServer;
let service: TestPushService;
let cloud: TestCloud;
let barrier: JournalBarrier;
let holder: KeyHolder;
let owner: Person;
let anna: Person;
let ben: Person;

interface Person {
  id: number;
  browser: BrowserSubscription;
}

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  cloud = await startTestCloud({
    database,
    clock,
    env: {
      SMTP_URL: mail.url,
      MAIL_FROM: 'Gatelink <gate@example.com>',
      GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1',
    },
  });
  service = new TestPushService();
  await service.start(cloud.ctx.vapid.publicKey);
  owner = await person('Olga Owner');
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email: OWNER_ADDRESS, email_verified_at: clock.now(), time_zone: 'Europe/Berlin' })
    .where('id', '=', owner.id)
    .execute();
  barrier = await journalBarrier(cloud.ctx, owner.id, 'Front gate', ['Main gate']);
  holder = await keyHolder(cloud.ctx, { customerId: owner.id, barrier, name: 'Demo Cleaning Ltd' });
  anna = await person('Anna', { mayGrant: true });
  ben = await person('Ben', { mayGrant: false });
  // Openings are told of apart (test/cloud/push-delivery.test.ts): here nobody is told of them.
  await choose(owner, { email: 'each' });
  await choose(anna, {});
  await choose(ben, {});
  await deliver();
});

afterEach(async () => {
  await deliver();
  service.received.length = 0;
  mail.messages.length = 0;
});

afterAll(async () => {
  await service?.stop();
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

/** A customer with a browser, a member of the barrier when `mayGrant` is given. */
async function person(name: string, member?: { mayGrant: boolean }): Promise<Person> {
  const { id } = await cloud.ctx.db
    .insertInto('customers')
    .values({ display_name: name })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (member) {
    await cloud.ctx.db
      .insertInto('barrier_members')
      .values({
        device_id: barrier.deviceId,
        customer_id: id,
        may_grant: member.mayGrant,
        added_by: owner.id,
        joined_at: clock.now(),
      })
      .execute();
  }
  const browser = service.subscribe();
  await subscribe(cloud.ctx, {
    customerId: id,
    subscription: browser,
    userAgent: 'Mozilla/5.0 Chrome/126.0',
  });
  return { id, browser };
}

async function choose(
  who: Person,
  choice: Partial<{ email: 'none' | 'each'; leftOpen: boolean; accessChanges: boolean }>,
): Promise<void> {
  await setChoice(cloud.ctx.db, {
    customerId: who.id,
    deviceId: barrier.deviceId,
    choice: { ...DEFAULT_CHOICE, tell: 'none', ...choice },
    now: clock.now(),
  });
}

async function deliver(): Promise<void> {
  const local = { allowPrivateAddresses: true, timeoutMs: 5_000, random: () => 0.5 };
  await deliverDuePushes(cloud.ctx, local);
  await deliverDueMails(cloud.ctx, { random: () => 0.5 });
}

const pushesTo = (who: Person) => service.payloadsFor(who.browser);
/** The same notice as another person's: the words but times, which each reads in their own zone. */
const sameAs = (payload: Record<string, unknown> | undefined) => ({ ...payload, body: expect.any(String) });

function mailBody(message: ReceivedMail): { subject: string; body: string } {
  const unfolded = message.raw.replace(/\r?\n[ \t]+/g, ' ');
  const subject = /^subject: (.*)$/im.exec(unfolded)?.[1] ?? '';
  const [, ...rest] = message.raw.split(/\r?\n\r?\n/);
  const body = rest
    .join('\n\n')
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return { subject, body: Buffer.from(body, 'latin1').toString('utf8') };
}

/** An opening of the main gate, seen open a moment after its relay fired. */
async function gateOpened(): Promise<{ entry: number; openedAt: Date }> {
  const at = clock.now();
  const [entry] = await insertEntries(cloud.ctx, barrier, [{ holder, actor: 'Driver 7', at }]);
  const openedAt = new Date(at.getTime() + 2000);
  await writeSteps(cloud.ctx, entry!, { relayFired: at, opened: openedAt });
  await sensorOn(cloud.ctx, barrier.objects[0]!.id, { position: 'open', since: openedAt });
  return { entry: entry!, openedAt };
}

/** The gate's close, reported as the controller reports it and applied by the function that applies reports. */
async function gateClosed(): Promise<void> {
  const now = clock.now();
  await sql`select apply_position_report(${barrier.deviceId}, ${'out0'}, ${'closed'}, ${now.getTime()},
                                         ${JSON.stringify({ changed_at: now.getTime() })}::jsonb, ${now})`.execute(
    cloud.ctx.db,
  );
}

/** What a lock screen may show must never carry a code, a secret or a link that signs in. */
async function expectNothingSecret(payloads: readonly unknown[]): Promise<void> {
  const codes = await cloud.ctx.db.selectFrom('requests').select('code').execute();
  for (const payload of payloads) {
    const text = JSON.stringify(payload);
    for (const { code } of codes) expect(text).not.toContain(code);
    expect(text).not.toMatch(/secret|token|sign-in|invitations|\/c\//i);
  }
}

describe('a gate left open', () => {
  it('tells the household once, by push and e-mail, however often and wherever the sweep runs; then "closed again"', async () => {
    await choose(ben, { leftOpen: false });
    const { openedAt } = await gateOpened();
    clock.advance(10 * MIN + 5_000);

    await Promise.all([sweepLeftOpen(cloud.ctx), sweepGates(cloud.ctx)]);
    await sweepLeftOpen(cloud.ctx);
    await deliver();
    await sweepGates(cloud.ctx);
    await deliver();

    const [toOwner, ...more] = pushesTo(owner);
    expect(more).toEqual([]);
    expect(toOwner).toMatchObject({
      kind: 'left_open',
      title: 'Front gate: left open',
      body: `Main gate open since ${'15:00'}, opened by Driver 7 of Demo Cleaning Ltd`,
      url: `${cloud.baseUrl}/barriers/${barrier.deviceId}`,
    });
    expect(pushesTo(anna)).toEqual([sameAs(toOwner)]);
    expect(pushesTo(ben)).toEqual([]);
    expect(mail.messages).toHaveLength(1);
    const leftOpen = mailBody(mail.lastTo(OWNER_ADDRESS)!);
    expect(leftOpen.subject).toBe('Front gate: left open');
    expect(leftOpen.body).toContain(
      `Main gate has stood open since 27 Nov 2026, 15:00 (Europe/Berlin), longer than your limit.`,
    );
    expect(leftOpen.body).toContain('It was opened by Driver 7 of Demo Cleaning Ltd (domain not confirmed).');
    expect(openedAt.toISOString()).toBe('2026-11-27T14:00:02.000Z');

    clock.advance(3 * MIN);
    await gateClosed();
    await deliver();
    await deliver();

    const closed = pushesTo(owner)[1];
    expect(closed).toMatchObject({
      kind: 'closed_again',
      title: 'Front gate: closed again',
      body: 'Main gate closed at 15:13, open since 15:00',
      tag: toOwner!.tag,
    });
    expect(pushesTo(owner)).toHaveLength(2);
    expect(pushesTo(anna)).toEqual([sameAs(toOwner), sameAs(closed)]);
    expect(pushesTo(ben)).toEqual([]);
    expect(mail.messages).toHaveLength(2);
    expect(mailBody(mail.lastTo(OWNER_ADDRESS)!).subject).toBe('Front gate: closed again');
    await expectNothingSecret([
      ...pushesTo(owner),
      ...mail.messages.map((message) => mailBody(message).body),
    ]);
    await choose(ben, {});
  });

  it('opened by other means, is told without a company', async () => {
    await sensorOn(cloud.ctx, barrier.objects[0]!.id, { position: 'open', since: clock.now() });
    clock.advance(11 * MIN);
    await sweepLeftOpen(cloud.ctx);
    await deliver();
    expect(pushesTo(ben)).toEqual([
      expect.objectContaining({
        title: 'Front gate: left open',
        body: expect.stringContaining('by other means'),
      }),
    ]);
    await gateClosed();
  });
});

describe('access granted or withdrawn', () => {
  it("by a member tells the owner and the others, not the member; the owner's withdrawal tells the members", async () => {
    const keyRef = await grantKey(cloud.ctx, { customerId: anna.id, barrier, companyId: holder.companyId });
    await deliver();

    expect(pushesTo(anna)).toEqual([]);
    const [granted] = pushesTo(owner);
    expect(granted).toMatchObject({
      kind: 'access_change',
      title: 'Front gate: Anna granted Demo Cleaning Ltd access',
      url: `${cloud.baseUrl}/barriers/${barrier.deviceId}`,
    });
    expect(pushesTo(ben)).toEqual([sameAs(granted)]);
    expect(mailBody(mail.lastTo(OWNER_ADDRESS)!).subject).toBe(
      'Front gate: Anna granted Demo Cleaning Ltd access',
    );

    await revokeAccessKey(cloud.ctx, { keyRef, customerId: owner.id, deviceId: barrier.deviceId });
    await deliver();

    expect(pushesTo(owner)).toHaveLength(1);
    const withdrawn = { title: "Front gate: Olga Owner withdrew Demo Cleaning Ltd's access" };
    expect(pushesTo(anna)).toEqual([expect.objectContaining(withdrawn)]);
    expect(pushesTo(ben)).toEqual([sameAs(granted), expect.objectContaining(withdrawn)]);
    await expectNothingSecret([...pushesTo(ben), ...mail.messages.map((message) => mailBody(message).body)]);
  });

  it('with an end says the day; a key lapsing by time tells nobody', async () => {
    const request = await cloud.ctx.db
      .transaction()
      .execute((trx) =>
        createRequest(trx, { companyId: holder.companyId, ref: undefined, ttlHours: 24, now: clock.now() }),
      );
    await claimRequest(cloud.ctx, { code: request.code, customerId: anna.id });
    await issueAccessKey(cloud.ctx, {
      code: request.code,
      customerId: anna.id,
      deviceId: barrier.deviceId,
      objectIds: [barrier.objects[0]!.id],
      keyExpiresAt: new Date('2026-12-04T00:00:00Z'),
    });
    await deliver();
    expect(pushesTo(owner)).toEqual([
      expect.objectContaining({
        title: 'Front gate: Anna granted Demo Cleaning Ltd access until 3 Dec 2026',
      }),
    ]);
    service.received.length = 0;

    clock.set(new Date('2026-12-05T00:00:00Z'));
    await sweepExpired(cloud.ctx);
    await deliver();
    expect(service.received).toEqual([]);
  });

  it('a box unticked tells that person nothing', async () => {
    await choose(ben, { accessChanges: false });
    await grantKey(cloud.ctx, { customerId: anna.id, barrier, companyId: holder.companyId });
    await deliver();
    expect(pushesTo(owner)).toHaveLength(1);
    expect(pushesTo(ben)).toEqual([]);
    await choose(ben, {});
  });
});

describe('a person removed from the household', () => {
  it('is told nothing more, not even what was waiting for them', async () => {
    await gateOpened();
    clock.advance(11 * MIN);
    await sweepLeftOpen(cloud.ctx);
    await removeMember(cloud.ctx, { customerId: owner.id, deviceId: barrier.deviceId, memberId: ben.id });
    await grantKey(cloud.ctx, { customerId: anna.id, barrier, companyId: holder.companyId });
    await gateClosed();
    await deliver();

    expect(pushesTo(ben)).toEqual([]);
    expect(pushesTo(owner).map((payload) => payload.kind)).toEqual([
      'left_open',
      'access_change',
      'closed_again',
    ]);
  });
});
