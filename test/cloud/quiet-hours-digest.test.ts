import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDueDigests } from '../../cloud/links/mail/digest-delivery.js';
import { deliverDueMails } from '../../cloud/links/mail/opening-mail-delivery.js';
import { deliverDuePushes } from '../../cloud/links/web-push/push-delivery.js';
import { PUSH_RETRY_DELAYS_MS } from '../../cloud/rules/outboxes/notice-retry-schedule.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import {
  type EntryInput,
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
import { type ReceivedMail, startMailServer, type TestMailServer } from '../support/mail-server.js';
import { parseSamples, sampleValue } from '../support/prometheus-text.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';

/**
 * Quiet hours and the daily digest (docs/design.md section 10.7), as the people of a barrier notice them: what
 * reaches their phones and inboxes (a push service and a real SMTP server on loopback), the digest's one e-mail
 * a day from 07:00 in their own zone, its one-click unsubscribe, the metrics an operator reads, and the card's
 * form refusing what it never sends. Olga, the owner, lives in Europe/Berlin (UTC+1 in November); Max, a member,
 * chose no zone and reads UTC. Each case uses days of its own, and the fake clock is set to the morning after.
 */
const clock = new FakeClock(new Date('2026-11-20T12:00:00Z'));
const OLGA = 'olga@example.com';
const MAX = 'max@example.com';

let database: TestDatabase;
let mail: TestMailServer;
let pushes: TestPushService;
let cloud: TestCloud;
let owner: { id: number; client: BrowserClient };
let member: { id: number; client: BrowserClient };
let barrier: JournalBarrier;
let holder: KeyHolder;
let ownerPhone: BrowserSubscription;
let memberPhone: BrowserSubscription;

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
  pushes = new TestPushService();
  await pushes.start(cloud.ctx.vapid.publicKey);
  owner = await signedInCustomer(cloud, 'Olga Owner');
  member = await signedInCustomer(cloud, 'Max Member');
  await confirmAddress(owner.id, OLGA, 'Europe/Berlin');
  await confirmAddress(member.id, MAX, null);
  barrier = await journalBarrier(cloud.ctx, owner.id, 'Front gate');
  holder = await keyHolder(cloud.ctx, { customerId: owner.id, barrier, name: 'Demo Cleaning Ltd' });
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
  mail.messages.length = 0;
  pushes.received.length = 0;
});

afterAll(async () => {
  await pushes?.stop();
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

async function confirmAddress(customerId: number, email: string, zone: string | null): Promise<void> {
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email, email_verified_at: clock.now(), time_zone: zone })
    .where('id', '=', customerId)
    .execute();
}

async function phoneOf(customerId: number): Promise<BrowserSubscription> {
  const subscription = pushes.subscribe();
  await subscribe(cloud.ctx, {
    customerId,
    subscription,
    userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0',
  });
  return subscription;
}

/** Chooses on the barrier's page, as the person does: the page first, for its form's token. */
async function choose(client: BrowserClient, fields: Record<string, string>) {
  await client.get(`/barriers/${barrier.deviceId}`);
  return client.post(`/barriers/${barrier.deviceId}/notifications`, fields);
}

/** Entries by actor, each at its instant. */
function entries(list: [actor: string, at: string, outcome?: EntryInput['outcome']][]): Promise<number[]> {
  return insertEntries(
    cloud.ctx,
    barrier,
    list.map(([actor, at, outcome]) => ({ holder, actor, at: new Date(at), outcome: outcome ?? 'opened' })),
  );
}

/** A message as a mail client reads it: headers unfolded, the body's quoted-printable undone. */
function readMail(message: ReceivedMail): { headers: Map<string, string>; body: string } {
  const [head = '', ...rest] = message.raw.split(/\r?\n\r?\n/);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = rest.join('\n\n');
  if (headers.get('content-transfer-encoding') === 'quoted-printable') {
    const bytes = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    body = Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return { headers, body: body.replace(/\r\n/g, '\n') };
}

function inbox(address: string): { subject: string; body: string; headers: Map<string, string> }[] {
  return mail.messages
    .filter((message) => message.to.includes(address))
    .map((message) => {
      const { headers, body } = readMail(message);
      return { subject: headers.get('subject') ?? '', body, headers };
    });
}

const digests = (address: string) =>
  inbox(address).filter((message) => message.subject.startsWith('Your barriers'));

/** Pushes and e-mails of each entry, delivered now; who was told of which actor. */
async function toldOfEach(): Promise<Record<string, string[]>> {
  await deliverDuePushes(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 5_000, random: () => 0.5 });
  await deliverDueMails(cloud.ctx, { random: () => 0.5 });
  const actors = (phone: BrowserSubscription) =>
    pushes.payloadsFor(phone).map((payload) => String(payload.actor));
  const mailed = (address: string) =>
    inbox(address).map((message) => /By (.+) of Demo/.exec(message.body)?.[1] ?? message.subject);
  return {
    ownerPush: actors(ownerPhone).sort(),
    ownerMail: mailed(OLGA).sort(),
    memberPush: actors(memberPhone).sort(),
    memberMail: mailed(MAX).sort(),
  };
}

const digest = (options: Parameters<typeof deliverDueDigests>[1] = {}) =>
  deliverDueDigests(cloud.ctx, { random: () => 0.5, ...options });

describe('quiet hours', () => {
  it('crossing midnight, silence push and the e-mail of each in the person’s own zone, and not outside', async () => {
    const night = { tell: 'every', email: 'each', quiet_from: '22:00', quiet_until: '07:00' };
    expect((await choose(owner.client, night)).status).toBe(303);
    expect((await choose(member.client, night)).status).toBe(303);

    await entries([
      ['A at 21:59 Berlin', '2026-11-19T20:59:00Z'],
      ['B at 22:00 Berlin', '2026-11-19T21:00:00Z'],
      ['C at 23:30 Berlin', '2026-11-19T22:30:00Z'],
      ['D at 03:00 Berlin', '2026-11-20T02:00:00Z'],
      ['E at 06:59 Berlin', '2026-11-20T05:59:00Z'],
      ['F at 07:00 Berlin', '2026-11-20T06:00:00Z'],
      ['G at 08:00 Berlin', '2026-11-20T07:00:00Z'],
    ]);

    expect(await toldOfEach()).toEqual({
      // Olga's night is 21:00 to 06:00 UTC.
      ownerPush: ['A at 21:59 Berlin', 'F at 07:00 Berlin', 'G at 08:00 Berlin'],
      ownerMail: ['A at 21:59 Berlin', 'F at 07:00 Berlin', 'G at 08:00 Berlin'],
      // Max reads UTC: his night is 22:00 to 07:00 UTC.
      memberPush: ['A at 21:59 Berlin', 'B at 22:00 Berlin', 'G at 08:00 Berlin'],
      memberMail: ['A at 21:59 Berlin', 'B at 22:00 Berlin', 'G at 08:00 Berlin'],
    });
    // The journal still has every entry.
    const journal = visibleText((await owner.client.get(`/barriers/${barrier.deviceId}/journal`)).html);
    for (const actor of ['B at 22:00 Berlin', 'C at 23:30 Berlin', 'D at 03:00 Berlin', 'E at 06:59 Berlin'])
      expect(journal).toContain(actor);
  });

  it('are shown back on the card, in the reader’s zone, with the e-mail choice', async () => {
    await choose(owner.client, {
      tell: 'refused',
      email: 'daily',
      quiet_from: '22:00',
      quiet_until: '07:00',
    });

    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);

    expect(page.html).toMatch(/<input type="radio" name="email" value="daily" checked/);
    expect(page.html).toMatch(/<input type="time" id="quiet-from" name="quiet_from" value="22:00"/);
    expect(page.html).toMatch(/<input type="time" id="quiet-until" name="quiet_until" value="07:00"/);
    const text = visibleText(page.html);
    expect(text).toContain('Quiet hours');
    expect(text).toContain('One e-mail a day');
    expect(text).toContain('(Europe/Berlin)');
  });

  it('and the e-mail choice refuse a value the card never sends, and nothing is written', async () => {
    await choose(owner.client, { tell: 'every', email: 'each', quiet_from: '23:00', quiet_until: '06:00' });
    const forged: Record<string, string>[] = [
      { tell: 'every', email: 'weekly' },
      { tell: 'every', email: 'none', quiet_from: '22:00' },
      { tell: 'every', email: 'none', quiet_until: '07:00' },
      { tell: 'every', email: 'none', quiet_from: '22:00', quiet_until: '22:00' },
      { tell: 'every', email: 'none', quiet_from: '7:00', quiet_until: '08:00' },
      { tell: 'every', email: 'none', quiet_from: '24:00', quiet_until: '07:00' },
      { tell: 'every', email: 'none', quiet_from: '22:00:00', quiet_until: '07:00' },
      { tell: 'every', email: 'none', quiet_from: 'late', quiet_until: 'early' },
    ];
    for (const fields of forged) {
      const answer = await choose(owner.client, fields);
      expect(answer.status, JSON.stringify(fields)).toBe(400);
    }
    const rows = await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({
        customer_id: owner.id,
        tell: 'every',
        by_email: true,
        email_digest: false,
        quiet_from: '23:00',
        quiet_until: '06:00',
      }),
    ]);
  });

  it('a card of the previous release, its box ticked, still asks for an e-mail of each', async () => {
    expect((await choose(owner.client, { tell: 'every', by_email: '1' })).status).toBe(303);
    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toMatch(/<input type="radio" name="email" value="each" checked/);
  });

  it("[attack:web.quiet-hours-foreign] a stranger's quiet hours or digest for the barrier are 404 and change nothing", async () => {
    await choose(owner.client, { tell: 'every', email: 'each' });
    const stranger = await signedInCustomer(cloud, 'Sam Stranger');
    await stranger.client.get('/barriers');

    const forged = await stranger.client.post(`/barriers/${barrier.deviceId}/notifications`, {
      tell: 'every',
      email: 'daily',
      quiet_from: '00:00',
      quiet_until: '23:59',
    });

    expect(forged.status).toBe(404);
    const rows = await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({
        customer_id: owner.id,
        by_email: true,
        email_digest: false,
        quiet_from: null,
      }),
    ]);
  });
});

describe('the daily digest', () => {
  it('goes once from 07:00 in each person’s zone, of the day before, quiet hours included, by what they chose', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily', quiet_from: '22:00', quiet_until: '07:00' });
    await choose(member.client, { tell: 'refused', email: 'daily' });
    await entries([
      ['Late driver', '2026-11-25T22:30:00Z'],
      ['Night driver', '2026-11-25T23:30:00Z'],
      ['Driver 7', '2026-11-26T08:15:00Z'],
      ['Driver 8', '2026-11-26T16:00:00Z', 'forbidden'],
      ['Early driver', '2026-11-26T23:10:00Z'],
    ]);

    // 06:59 in Berlin: not yet.
    clock.set(new Date('2026-11-27T05:59:00Z'));
    expect(await digest()).toMatchObject({ sent: 0 });
    // 07:00 in Berlin, 06:00 in UTC: Olga's only.
    clock.set(new Date('2026-11-27T06:00:00Z'));
    expect(await digest()).toMatchObject({ sent: 1 });
    clock.advance(30 * 60_000);
    expect(await digest()).toMatchObject({ sent: 0 });

    const [olgas] = digests(OLGA);
    expect(digests(OLGA)).toHaveLength(1);
    expect(olgas?.subject).toBe('Your barriers on 26 Nov 2026: 3 entries');
    expect(olgas?.body).toContain('Front gate: 3 entries');
    expect(olgas?.body).toContain(
      '00:30  Opened, by Night driver of Demo Cleaning Ltd (domain not confirmed)',
    );
    expect(olgas?.body).toContain('09:15  Opened, by Driver 7 of Demo Cleaning Ltd (domain not confirmed)');
    expect(olgas?.body).toContain('17:00  Refused: not in the key, by Driver 8 of Demo Cleaning Ltd');
    expect(olgas?.body).toContain(`The journal: ${cloud.baseUrl}/barriers/${barrier.deviceId}/journal`);
    expect(olgas?.body).not.toMatch(/Late driver|Early driver/);
    // Nothing that signs anyone in.
    expect(olgas?.body).not.toMatch(/\/signin|\/c\/|code is/i);
    // A digest is not an e-mail of each: none of those went.
    await deliverDueMails(cloud.ctx, { random: () => 0.5 });
    expect(inbox(OLGA)).toHaveLength(1);
    expect(digests(MAX)).toEqual([]);

    // 07:00 in UTC: Max's, of his own day and only the refusal he asked for.
    clock.set(new Date('2026-11-27T07:00:00Z'));
    expect(await digest()).toMatchObject({ sent: 1 });
    const [maxs] = digests(MAX);
    expect(maxs?.subject).toBe('Your barriers on 26 Nov 2026: 1 entry');
    expect(maxs?.body).toContain('16:00  Refused: not in the key, by Driver 8');
    expect(maxs?.body).not.toMatch(/Driver 7|Night driver|Early driver/);
  });

  it('sends nothing for a day without entries', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    clock.set(new Date('2026-11-29T06:00:00Z'));

    expect(await digest()).toMatchObject({ sent: 0, empty: 1 });
    expect(await digest()).toMatchObject({ sent: 0, empty: 0 });
    expect(digests(OLGA)).toEqual([]);
  });

  it('two workers racing send one', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    await entries([['Racer', '2026-12-01T10:00:00Z']]);
    clock.set(new Date('2026-12-02T06:00:00Z'));

    const [first, second] = await Promise.all([digest(), digest()]);

    expect(first.sent + second.sent).toBe(1);
    expect(digests(OLGA)).toHaveLength(1);
  });

  it('lists at most 200 entries, and says how many more the journal holds', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    const start = Date.parse('2026-12-05T10:00:00Z');
    await insertEntries(
      cloud.ctx,
      barrier,
      Array.from({ length: 205 }, (_, i) => ({
        holder,
        actor: `Driver ${i}`,
        at: new Date(start + i * 1000),
      })),
    );
    clock.set(new Date('2026-12-06T06:00:00Z'));

    expect(await digest()).toMatchObject({ sent: 1 });

    const [message] = digests(OLGA);
    expect(message?.subject).toBe('Your barriers on 5 Dec 2026: 205 entries');
    expect(message?.body.match(/ {2}\d\d:\d\d {2}Opened, by /g)).toHaveLength(200);
    expect(message?.body).toContain(
      `and 5 more, see the journal: ${cloud.baseUrl}/barriers/${barrier.deviceId}/journal`,
    );
  });

  it('stops with its one-click unsubscribe, posted as a mail client posts it', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    await entries([['Before', '2026-12-08T10:00:00Z']]);
    clock.set(new Date('2026-12-09T06:00:00Z'));
    await digest();
    const [message] = digests(OLGA);
    expect(message?.headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const link = /^<(.+)>$/.exec(message?.headers.get('list-unsubscribe') ?? '')?.[1] ?? '';
    expect(message?.body).toContain(link);

    const answer = await cloud.app.inject({
      method: 'POST',
      url: new URL(link).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });

    expect(answer.statusCode).toBe(200);
    expect(visibleText(answer.body)).toContain('You get no daily e-mail of your barriers');
    await entries([['After', '2026-12-09T10:00:00Z']]);
    clock.set(new Date('2026-12-10T06:00:00Z'));
    expect(await digest()).toMatchObject({ sent: 0, empty: 0 });
    expect(digests(OLGA)).toHaveLength(1);
    const page = await owner.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toMatch(/<input type="radio" name="email" value="none" checked/);
  });

  it("stops with the barrier's own link in it, which stops that barrier's e-mails", async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    await entries([['Before', '2026-12-11T10:00:00Z']]);
    clock.set(new Date('2026-12-12T06:00:00Z'));
    await digest();
    const body = digests(OLGA)[0]?.body ?? '';
    const link = new RegExp(
      `To stop e-mails of Front gate: (\\S+/notifications/unsubscribe/${barrier.deviceId}\\.\\S+)`,
    ).exec(body)?.[1];
    expect(link).toBeDefined();

    const answer = await cloud.app.inject({
      method: 'POST',
      url: new URL(link!).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });

    expect(answer.statusCode).toBe(200);
    expect(visibleText(answer.body)).toContain('You get no more e-mails of Front gate');
    await entries([['After', '2026-12-12T10:00:00Z']]);
    clock.set(new Date('2026-12-13T06:00:00Z'));
    expect(await digest()).toMatchObject({ sent: 0, empty: 0 });
  });

  it('[attack:web.unsubscribe-forged] a forged or altered digest link is 404 and stops nothing', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    const forged = [
      `digest.${owner.id}.${'A'.repeat(43)}`,
      `digest.${member.id}`,
      `${barrier.deviceId}.${owner.id}.${'A'.repeat(43)}`,
      'digest',
    ];
    for (const token of forged) {
      const answer = await cloud.app.inject({
        method: 'POST',
        url: `/notifications/unsubscribe-digest/${encodeURIComponent(token)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'List-Unsubscribe=One-Click',
      });
      expect(answer.statusCode, token).toBe(404);
    }
    const row = await cloud.ctx.db
      .selectFrom('notification_choices')
      .select('email_digest')
      .executeTakeFirst();
    expect(row?.email_digest).toBe(true);
  });
});

describe('e-mail metrics', () => {
  async function scrape() {
    const response = await cloud.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${cloud.operatorToken}` },
    });
    expect(response.statusCode).toBe(200);
    return parseSamples(response.body);
  }

  it('count attempts by result and the e-mails waiting, a digest retried on the schedule and then given up', async () => {
    await choose(owner.client, { tell: 'every', email: 'daily' });
    await entries([['Retried', '2026-12-15T10:00:00Z']]);
    clock.set(new Date('2026-12-16T06:00:00Z'));
    const before = await scrape();
    const count = (samples: typeof before, result: string) =>
      sampleValue(samples, 'gatelink_mail_attempts_total', { result }) ?? 0;
    const failing = {
      ...cloud.ctx,
      mailer: { sendNotice: async () => Promise.reject(new Error('451 try later')) },
    };

    expect(await deliverDueDigests(failing, { random: () => 0.5 })).toMatchObject({ failed: 1, gaveUp: 0 });
    const waiting = await scrape();
    expect(sampleValue(waiting, 'gatelink_mail_pending')).toBe(1);
    expect(count(waiting, 'failed') - count(before, 'failed')).toBe(1);

    for (const delay of PUSH_RETRY_DELAYS_MS) {
      clock.advance(delay);
      expect(await deliverDueDigests(failing, { random: () => 0.5 })).toMatchObject({ failed: 1 });
    }
    const after = await scrape();
    expect(count(after, 'gave_up') - count(before, 'gave_up')).toBe(1);
    expect(sampleValue(after, 'gatelink_mail_pending')).toBe(0);
    expect(digests(OLGA)).toEqual([]);

    await entries([['Sent', '2026-12-16T10:00:00Z']]);
    clock.set(new Date('2026-12-17T06:00:00Z'));
    await digest();
    expect(count(await scrape(), 'sent') - count(after, 'sent')).toBe(1);
  });
});
