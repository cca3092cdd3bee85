import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDuePushes } from '../../cloud/links/web-push/push-delivery.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import type { Controller } from '../../device/runtime/controller.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyRequest, companyStatus, type SecretAuth, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProvisionedGate, provisionGate } from '../support/provisioned-gate.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';
import { waitFor } from '../support/wait-for.js';

/**
 * "Ask me before each opening" (docs/design.md section 10.8), end to end: the customer turns it on when granting
 * or later; an `open` on such a key waits for an answer from whoever may grant on the barrier, given on the
 * barrier's page or the question's own; Allow opens through a real controller, Deny answers 403 `denied`,
 * silence 403 `not_answered` once the fake clock passes the wait; the first of two answers counts; a retry with
 * the same Idempotency-Key asks nothing twice; and nobody outside those who may grant can answer.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let gate: ProvisionedGate;
let controller: Controller;
let owner: BrowserClient;
let ownerId: number;
let pushService: TestPushService;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  pushService = new TestPushService();
  await pushService.start(cloud.ctx.vapid.publicKey);
  gate = await provisionGate(cloud);
  controller = await gate.startController();
  const device = await cloud.ctx.db
    .selectFrom('devices')
    .select('customer_id')
    .where('id', '=', gate.deviceId)
    .executeTakeFirstOrThrow();
  ownerId = device.customer_id!;
  owner = await BrowserClient.signedIn(cloud, ownerId);
});

afterAll(async () => {
  await controller?.stop();
  await gate?.remove();
  await pushService?.stop();
  await cloud?.stop();
  await database?.close();
});

/** A key on the gate that asks first, waiting `seconds` for an answer. */
async function askingKey(seconds = 60): Promise<number> {
  // The controller refuses a command signed on a clock far from its own: the fake clock starts at the real time.
  clock.set(new Date());
  const keyRef = await gate.newKey();
  await cloud.ctx.db.updateTable('keys').set({ ask_first_s: seconds }).where('id', '=', keyRef).execute();
  return keyRef;
}

/** The journal entry of the question the gate's key is asking now, once it is asked. */
async function askedEntry(): Promise<number> {
  let entry = 0;
  await waitFor(async () => {
    const row = await cloud.ctx.db
      .selectFrom('opening_questions')
      .select('journal_id')
      .where('device_id', '=', gate.deviceId)
      .where('answer', 'is', null)
      .orderBy('journal_id', 'desc')
      .executeTakeFirst();
    entry = row?.journal_id ?? 0;
    return entry > 0;
  }, 'the question to be asked');
  return entry;
}

function questionPath(entry: number): string {
  return `/barriers/${gate.deviceId}/questions/${entry}`;
}

async function answerAs(client: BrowserClient, entry: number, answer: 'allow' | 'deny') {
  await client.get(questionPath(entry));
  return client.post(questionPath(entry), { answer });
}

async function entryOf(id: number) {
  return cloud.ctx.db
    .selectFrom('journal')
    .leftJoin('opening_questions as q', 'q.journal_id', 'journal.id')
    .select(['journal.outcome', 'journal.acked_at', 'q.answer', 'q.answered_by'])
    .where('journal.id', '=', id)
    .executeTakeFirstOrThrow();
}

async function member(name: string, mayGrant: boolean): Promise<{ id: number; client: BrowserClient }> {
  const person = await signedInCustomer(cloud, name);
  await cloud.ctx.db
    .insertInto('barrier_members')
    .values({
      device_id: gate.deviceId,
      customer_id: person.id,
      may_grant: mayGrant,
      added_by: ownerId,
      joined_at: clock.now(),
    })
    .execute();
  return person;
}

describe('an open on a key that asks first', () => {
  it('waits for the Allow given on the barrier page, then opens through the controller', async () => {
    const keyRef = await askingKey();
    const opening = gate.open(keyRef);
    const entry = await askedEntry();
    const page = visibleText((await owner.get(`/barriers/${gate.deviceId}`)).html);
    expect(page).toContain('Waiting for your answer');
    expect(page).toContain('Gate Couriers asks to open Main gate for Driver 7');
    // The barrier page's own form, as a phone without push answers.
    const posted = await owner.post(questionPath(entry), { answer: 'allow' });
    expect(posted.status).toBe(303);
    const answer = await opening;
    expect({ status: answer.status, id: answer.body.id }).toEqual({ status: 200, id: entry });
    await waitFor(async () => (await entryOf(entry)).outcome === 'opened', 'the entry to be completed');
    expect(await entryOf(entry)).toMatchObject({ answer: 'allowed', answered_by: ownerId });
    const journal = visibleText((await owner.get(`/barriers/${gate.deviceId}/journal`)).html);
    expect(journal).toContain('Asked first: Allowed by Gate Customer');
    const after = visibleText((await owner.get(questionPath(entry))).html);
    expect(after).toContain('Allowed — answered by Gate Customer');
  });

  it('answers 403 denied on a Deny, tells the company so, and sends nothing to the gate', async () => {
    const keyRef = await askingKey();
    const opening = gate.open(keyRef);
    const entry = await askedEntry();
    await answerAs(owner, entry, 'deny');
    const answer = await opening;
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 403, error: 'denied' });
    expect(await entryOf(entry)).toMatchObject({ outcome: 'denied', acked_at: null, answer: 'denied' });
    const event = await cloud.ctx.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'open.failed')
      .orderBy('at', 'desc')
      .executeTakeFirstOrThrow();
    expect(event.data).toMatchObject({ journal_id: entry, outcome: 'denied' });
    // The company learns the outcome, not who in the household gave it.
    expect(JSON.stringify(event.data)).not.toContain('Gate Customer');
    const journal = visibleText((await owner.get(`/barriers/${gate.deviceId}/journal`)).html);
    expect(journal).toContain('Not opened: denied when asked');
  });

  it('answers 403 not_answered once the wait has passed with no answer, and a late Allow changes nothing', async () => {
    const keyRef = await askingKey(30);
    const opening = gate.open(keyRef);
    const entry = await askedEntry();
    clock.advance(30_000);
    const answer = await opening;
    expect({ status: answer.status, error: answer.body.error }).toEqual({
      status: 403,
      error: 'not_answered',
    });
    expect(await entryOf(entry)).toMatchObject({ outcome: 'not_answered', answer: 'unanswered' });
    await answerAs(owner, entry, 'allow');
    expect(await entryOf(entry)).toMatchObject({ outcome: 'not_answered', answer: 'unanswered' });
    expect(visibleText((await owner.get(questionPath(entry))).html)).toContain('Nobody answered in time');
  });

  it('counts exactly one of two answers given at once', async () => {
    const granter = await member('Gina Granter', true);
    const keyRef = await askingKey();
    const opening = gate.open(keyRef);
    const entry = await askedEntry();
    await Promise.all([granter.client.get(questionPath(entry)), owner.get(questionPath(entry))]);
    await Promise.all([
      granter.client.post(questionPath(entry), { answer: 'deny' }),
      owner.post(questionPath(entry), { answer: 'allow' }),
    ]);
    const answer = await opening;
    const stored = await entryOf(entry);
    if (stored.answer === 'allowed') {
      expect({ status: answer.status, by: stored.answered_by }).toEqual({ status: 200, by: ownerId });
    } else {
      expect({ status: answer.status, error: answer.body.error, by: stored.answered_by }).toEqual({
        status: 403,
        error: 'denied',
        by: granter.id,
      });
    }
  });

  it('asks nothing twice when the company retries with its Idempotency-Key while the question is open', async () => {
    const keyRef = await askingKey();
    const headers = { 'idempotency-key': `ask-${keyRef}` };
    const opening = gate.open(keyRef, headers);
    const entry = await askedEntry();
    const retry = await gate.open(keyRef, headers);
    expect({ status: retry.status, error: retry.body.error }).toEqual({
      status: 409,
      error: 'idempotency_in_progress',
    });
    await answerAs(owner, entry, 'allow');
    expect((await opening).status).toBe(200);
    const again: Answer = await gate.open(keyRef, headers);
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 200, id: entry });
    const questions = await cloud.ctx.db
      .selectFrom('opening_questions')
      .innerJoin('journal', 'journal.id', 'opening_questions.journal_id')
      .select('journal.id')
      .where('journal.key_id', '=', keyRef)
      .execute();
    expect(questions).toHaveLength(1);
  });
});

describe('the question on the phone', () => {
  async function browserOf(customerId: number): Promise<BrowserSubscription> {
    const subscription = pushService.subscribe();
    await subscribe(cloud.ctx, {
      customerId,
      subscription,
      userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile',
    });
    return subscription;
  }

  it('reaches whoever may grant, whatever they chose to be told, and never one who may only look', async () => {
    const looker = await member('Lea Looker', false);
    const ownerPhone = await browserOf(ownerId);
    const lookerPhone = await browserOf(looker.id);
    // The owner chose to be told nothing of openings: a question still reaches them.
    await cloud.ctx.db
      .insertInto('notification_choices')
      .values({
        device_id: gate.deviceId,
        customer_id: ownerId,
        tell: 'none',
        by_email: false,
        quiet_from: null,
        quiet_until: null,
        updated_at: clock.now(),
      })
      .execute();
    const keyRef = await askingKey();
    const opening = gate.open(keyRef);
    const entry = await askedEntry();
    await deliverDuePushes(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 5_000, random: () => 0.5 });
    const questions = (phone: BrowserSubscription) =>
      pushService.payloadsFor(phone).filter((payload) => payload.kind === 'question');
    const [question] = questions(ownerPhone);
    expect(question).toMatchObject({
      kind: 'question',
      tag: `question-${entry}`,
      title: 'Yard: Gate Couriers asks to open',
      url: `${cloud.baseUrl}${questionPath(entry)}`,
    });
    expect(String(question?.body)).toContain('For Driver 7, to open Main gate.');
    // Nothing in it answers by itself: no code, no token, no sign-in link.
    expect(JSON.stringify(question)).not.toMatch(/token|code=|signin|_csrf/i);
    expect(questions(lookerPhone)).toEqual([]);
    await answerAs(owner, entry, 'allow');
    expect((await opening).status).toBe(200);
    await cloud.ctx.db.deleteFrom('push_subscriptions').execute();
    await cloud.ctx.db.deleteFrom('notification_choices').execute();
  });
});

describe('who may answer', () => {
  it('refuses an Allow without the session, from another customer, or from a member who may only look [attack:web.answer-forged]', async () => {
    const looker = await member('Lou Looker', false);
    const stranger = await signedInCustomer(cloud, 'Sam Stranger');
    const keyRef = await askingKey();
    const opening = gate.open(keyRef);
    const entry = await askedEntry();

    // Forged without the session: the page's token, no cookie.
    await owner.get(questionPath(entry));
    const anonymous = new BrowserClient(cloud.app);
    const forged = await anonymous.post(questionPath(entry), { answer: 'allow', _csrf: owner.csrfToken });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect(forged.status).toBeLessThan(500);

    // Another customer, with a session and a token of their own: the barrier is not theirs.
    await stranger.client.get('/barriers');
    expect((await stranger.client.post(questionPath(entry), { answer: 'allow' })).status).toBe(404);

    // A member who may only look reads the question, without buttons, and cannot answer it.
    const seen = await looker.client.get(questionPath(entry));
    expect(visibleText(seen.html)).toContain('Waiting for the owner');
    expect(seen.html).not.toContain('value="allow"');
    expect((await looker.client.post(questionPath(entry), { answer: 'allow' })).status).toBe(404);

    // A value the buttons never send.
    const odd = await owner.post(questionPath(entry), { answer: 'maybe' });
    expect(odd.status).toBe(400);

    expect(await entryOf(entry)).toMatchObject({ outcome: null, answer: null });
    await answerAs(owner, entry, 'deny');
    expect((await opening).body.error).toBe('denied');
  });
});

describe('turning it on and off', () => {
  let company: SecretAuth;

  beforeAll(async () => {
    company = await secretCompany(cloud, 'Asked Cleaners');
  });

  it('is chosen on the consent form, shown to the company in status, and changed on the key’s page', async () => {
    clock.set(new Date());
    const code = await companyRequest(cloud, company);
    await owner.get(`/c/${code}`);
    await owner.post(`/c/${code}/claim`);
    await owner.get(`/c/${code}`);
    const refused = await owner.post(`/c/${code}/grant`, {
      object: String(gate.numberId),
      lifetime: 'withdrawn',
      ask: 'yes',
      ask_seconds: '45',
    });
    expect(refused.status).toBe(400);
    expect(visibleText(refused.html)).toContain('Choose how long an opening waits for your answer');
    const granted = await owner.post(`/c/${code}/grant`, {
      object: String(gate.numberId),
      lifetime: 'withdrawn',
      ask: 'yes',
      ask_seconds: '30',
    });
    expect(granted.location).toBe(`/c/${code}?granted=1`);
    const status = await companyStatus(cloud, company, code);
    expect(status.body.ask_first_s).toBe(30);
    const keyRef = status.body.key_ref as number;
    const page = visibleText((await owner.get(`/barriers/${gate.deviceId}`)).html);
    expect(page).toContain('Asks you first: each opening waits up to 30 s for your Allow.');

    const shapePath = `/barriers/${gate.deviceId}/keys/${keyRef}/shape`;
    const form = await owner.get(shapePath);
    expect(form.html).toMatch(/name="ask" value="yes"[^>]*checked/);
    const saved = await owner.post(shapePath, {
      hours: 'any',
      start: 'now',
      openings: 'any',
      lifetime: 'withdrawn',
      ask: 'no',
    });
    expect(saved.status).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.ask_first_s).toBeUndefined();
  });
});
