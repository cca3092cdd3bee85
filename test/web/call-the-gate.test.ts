import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDuePushes } from '../../cloud/links/web-push/push-delivery.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { CALL_TAP_SECONDS } from '../../shared/limits.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openQuestion } from '../support/open-question.js';
import { type ProvisionedGate, provisionGate } from '../support/provisioned-gate.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';

/**
 * "Call the gate" (docs/design.md section 10.9): a gate that the customer's phone calls, its phone's controller
 * offline. An `open` asks whoever may grant, on the browsers they turned notifications on in, to call the gate
 * themselves; the tap is recorded and dials (303 to `tel:`), and the company's `open` answers as opened; no tap
 * in time, or nobody to ask, and the company gets `device_offline` as before. The phone's number reaches the
 * cloud from the controller's own provisioning, as a phone sends it.
 */
const GATE_NUMBER = '+491701234567';
const PHONE_OBJECTS = `
objects:
  - id: gate
    label: Mill Lane gate
    kind: phone
    number: "${GATE_NUMBER}"
clock:
  check: none
`;

const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let pushService: TestPushService;
let gate: ProvisionedGate;
let ownerId: number;
let owner: BrowserClient;
let ownerPhone: BrowserSubscription;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  pushService = new TestPushService();
  await pushService.start(cloud.ctx.vapid.publicKey);
  // Provisioned as the phone does it, and never started: its controller is offline throughout.
  gate = await provisionGate(cloud, PHONE_OBJECTS);
  const device = await cloud.ctx.db
    .selectFrom('devices')
    .select('customer_id')
    .where('id', '=', gate.deviceId)
    .executeTakeFirstOrThrow();
  ownerId = device.customer_id!;
  owner = await BrowserClient.signedIn(cloud, ownerId);
  ownerPhone = await browserOf(ownerId);
});

afterAll(async () => {
  await gate?.remove();
  await pushService?.stop();
  await cloud?.stop();
  await database?.close();
});

async function browserOf(customerId: number): Promise<BrowserSubscription> {
  const subscription = pushService.subscribe();
  await subscribe(cloud.ctx, {
    customerId,
    subscription,
    userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile',
  });
  return subscription;
}

function questionPath(entry: number): string {
  return `/barriers/${gate.deviceId}/questions/${entry}`;
}

/** The journal entry of the request to call that the gate's opening is waiting on, once it is asked. */
function callAsked(): Promise<number> {
  return openQuestion(
    cloud,
    { kind: 'call', deviceId: gate.deviceId },
    'the household to be asked to call the gate',
  );
}

async function pushesTo(phone: BrowserSubscription) {
  await deliverDuePushes(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 5_000, random: () => 0.5 });
  return pushService.payloadsFor(phone).filter((payload) => payload.kind === 'question');
}

async function journalText(): Promise<string> {
  return visibleText((await owner.get(`/barriers/${gate.deviceId}/journal`)).html);
}

async function newKey(): Promise<number> {
  clock.set(new Date());
  return gate.newKey();
}

describe('a gate the phone calls, its controller offline', () => {
  it('learns the number the phone dials from its provisioning', async () => {
    const object = await cloud.ctx.db
      .selectFrom('device_objects')
      .select(['kind', 'gate_number'])
      .where('device_id', '=', gate.deviceId)
      .executeTakeFirstOrThrow();
    expect(object).toEqual({ kind: 'phone', gate_number: GATE_NUMBER });
  });

  it('asks the owner to call the gate, dials on the tap, and answers the company as opened', async () => {
    const keyRef = await newKey();
    const opening = gate.open(keyRef);
    const entry = await callAsked();

    // The cloud's own push worker may have the push in hand: it reaches the phone in its time.
    await expect.poll(async () => (await pushesTo(ownerPhone)).length).toBeGreaterThan(0);
    const [push] = await pushesTo(ownerPhone);
    expect(push).toMatchObject({
      kind: 'question',
      asks: 'call',
      tag: `question-${entry}`,
      title: 'Yard: Gate Couriers asks to open',
      url: `${cloud.baseUrl}${questionPath(entry)}`,
    });
    expect(String(push?.body)).toContain('Your phone that calls the gate is offline');
    expect(JSON.stringify(push)).not.toContain(GATE_NUMBER);

    const barrier = visibleText((await owner.get(`/barriers/${gate.deviceId}`)).html);
    expect(barrier).toContain('Waiting for your answer');
    expect(barrier).toContain('Your phone that calls the gate is offline: call the gate yourself.');
    const page = await owner.get(questionPath(entry));
    expect(page.html).toContain('value="call"');
    expect(page.html).not.toContain('value="allow"');
    expect(visibleText(page.html)).toContain(`${GATE_NUMBER} is the gate's`);

    const tapped = await owner.post(questionPath(entry), { answer: 'call' });
    expect(tapped.status).toBe(303);
    expect(tapped.location).toBe(`tel:${GATE_NUMBER}`);

    const answer = await opening;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: 1, id: entry });
    const events = await cloud.ctx.db.selectFrom('events').select(['type', 'data']).execute();
    const told = events.filter((event) => (event.data as { journal_id?: number }).journal_id === entry);
    expect(told.map((event) => event.type)).toEqual(['open.succeeded']);

    const after = visibleText((await owner.get(questionPath(entry))).html);
    expect(after).toMatch(/Gate Customer tapped Call the gate at/);
    expect(after).toContain('Call the gate again');
    const journal = await journalText();
    expect(journal).toContain('Called the gate from your phone');
    expect(journal).toContain('the call was dialled by hand from "Call the gate"');
    expect(journal).toMatch(
      /Phone offline, asked you to call the gate: Gate Customer tapped Call the gate at/,
    );
  });

  it('answers device_offline once nobody tapped in time, and a late tap dials nothing', async () => {
    const keyRef = await newKey();
    const opening = gate.open(keyRef);
    const entry = await callAsked();
    clock.advance(CALL_TAP_SECONDS * 1000 + 1);
    const answer = await opening;
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe('device_offline');

    const late = await owner.post(questionPath(entry), { answer: 'call' });
    expect(late.status).toBe(303);
    expect(late.location).toBe(questionPath(entry));
    const page = visibleText((await owner.get(questionPath(entry))).html);
    expect(page).toContain('Nobody tapped Call the gate in time: the gate stayed shut.');
    expect(page).not.toContain(GATE_NUMBER);
    expect(await journalText()).toContain(
      'Phone offline, asked you to call the gate: nobody tapped Call the gate in time',
    );
  });

  it('turns an Allow into a request to call, and sends it again to the browser that allowed', async () => {
    const keyRef = await newKey();
    await cloud.ctx.db.updateTable('keys').set({ ask_first_s: 60 }).where('id', '=', keyRef).execute();
    const opening = gate.open(keyRef);
    const entry = await openQuestion(
      cloud,
      { kind: 'allow', deviceId: gate.deviceId },
      'the question to be asked',
    );
    // The cloud's own push worker may have the push in hand: it reaches the phone in its time.
    const questionPushes = async () =>
      (await pushesTo(ownerPhone)).filter((push) => push.tag === `question-${entry}`);
    await expect.poll(async () => (await questionPushes()).length).toBe(1);
    await owner.get(questionPath(entry));
    expect((await owner.post(questionPath(entry), { answer: 'allow' })).status).toBe(303);

    expect(await callAsked()).toBe(entry);
    await expect
      .poll(async () => (await questionPushes()).map((push) => push.asks ?? 'allow'))
      .toEqual(['allow', 'call']);
    // Allow again is not an answer to a request to call.
    expect((await owner.post(questionPath(entry), { answer: 'allow' })).status).toBe(400);
    expect((await owner.post(questionPath(entry), { answer: 'call' })).location).toBe(`tel:${GATE_NUMBER}`);
    expect((await opening).status).toBe(200);
  });

  it('lets only who may grant tap: another account and a member who may only look get nothing [attack:web.call-tap-forged]', async () => {
    const stranger = await signedInCustomer(cloud, 'Sam Stranger');
    const looker = await signedInCustomer(cloud, 'Lou Looker');
    await cloud.ctx.db
      .insertInto('barrier_members')
      .values({
        device_id: gate.deviceId,
        customer_id: looker.id,
        may_grant: false,
        added_by: ownerId,
        joined_at: clock.now(),
      })
      .execute();
    const lookerPhone = await browserOf(looker.id);
    const keyRef = await newKey();
    const opening = gate.open(keyRef);
    const entry = await callAsked();
    expect(await pushesTo(lookerPhone)).toEqual([]);

    await stranger.client.get('/barriers');
    const foreign = await stranger.client.post(questionPath(entry), { answer: 'call' });
    expect(foreign.status).toBe(404);
    expect(foreign.html).not.toContain(GATE_NUMBER);

    const seen = await looker.client.get(questionPath(entry));
    expect(visibleText(seen.html)).toContain('Waiting for the owner');
    expect(seen.html).not.toContain(GATE_NUMBER);
    expect((await looker.client.post(questionPath(entry), { answer: 'call' })).status).toBe(404);

    const question = await cloud.ctx.db
      .selectFrom('opening_questions')
      .select('answer')
      .where('journal_id', '=', entry)
      .executeTakeFirstOrThrow();
    expect(question.answer).toBeNull();
    clock.advance(CALL_TAP_SECONDS * 1000 + 1);
    expect((await opening).body.error).toBe('device_offline');
    await cloud.ctx.db.deleteFrom('push_subscriptions').where('customer_id', '=', looker.id).execute();
  });

  it('tells the owner on the barrier page what the offline phone means for companies, by whether they can be asked', async () => {
    const card = async () => {
      const { html } = await owner.get(`/barriers/${gate.deviceId}`);
      const text = visibleText(html);
      return text.slice(text.indexOf('Your phone'));
    };
    expect(await card()).toContain(
      'Offline: when a company opens, you are sent a notification asking you to call the gate yourself',
    );
    await cloud.ctx.db.deleteFrom('push_subscriptions').execute();
    const unasked = await card();
    expect(unasked).toContain('Offline: companies cannot open until your phone is back online.');
    expect(unasked).toContain('turn on notifications to be asked to call the gate yourself');
    expect((await owner.get(`/barriers/${gate.deviceId}`)).html).toContain(
      '<a href="/account">turn on notifications</a>',
    );
    ownerPhone = await browserOf(ownerId);
  });

  it('answers device_offline at once when nobody who may grant has a browser to ask', async () => {
    await cloud.ctx.db.deleteFrom('push_subscriptions').execute();
    const keyRef = await newKey();
    const answer = await gate.open(keyRef);
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe('device_offline');
    const asked = await cloud.ctx.db
      .selectFrom('opening_questions')
      .select('journal_id')
      .where('journal_id', '=', Number(answer.body.id ?? 0))
      .execute();
    expect(asked).toEqual([]);
    ownerPhone = await browserOf(ownerId);
  });
});

describe('a gate with a controller of its own, offline', () => {
  it('is device_offline as before, with nobody asked to call', async () => {
    const relayGate = await provisionGate(cloud);
    const device = await cloud.ctx.db
      .selectFrom('devices')
      .select('customer_id')
      .where('id', '=', relayGate.deviceId)
      .executeTakeFirstOrThrow();
    await browserOf(device.customer_id!);
    clock.set(new Date());
    const keyRef = await relayGate.newKey();
    const answer = await relayGate.open(keyRef);
    expect(answer.body.error).toBe('device_offline');
    const asked = await cloud.ctx.db
      .selectFrom('opening_questions')
      .select('journal_id')
      .where('device_id', '=', relayGate.deviceId)
      .execute();
    expect(asked).toEqual([]);
    await relayGate.remove();
  });
});
