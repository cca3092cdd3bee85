import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDueMails, type MailDeliveryOptions } from '../../cloud/links/mail/opening-mail-delivery.js';
import { unsubscribeToken } from '../../cloud/rules/notification-choices/unsubscribe-token.js';
import { fanOutJournal } from '../../cloud/rules/push-notifications/journal-fan-out.js';
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
import { type ReceivedMail, startMailServer, type TestMailServer } from '../support/mail-server.js';

/**
 * E-mails of openings (docs/design.md section 10.7), end to end: a person ticks "Also by e-mail" on the barrier's
 * page, an entry lands in the journal, the fan-out writes its e-mail row, and the delivery hands the message to
 * a real SMTP server on loopback. Then the one-click unsubscribe of RFC 8058, posted as a mail client posts it,
 * with no cookie and no CSRF token, and the page a GET of the link shows.
 */
const clock = new FakeClock(new Date('2026-11-27T14:02:00Z'));
const ADDRESS = 'olga@example.com';
/** No jitter: a retry comes exactly at its scheduled delay. */
const deliver = (options: Partial<MailDeliveryOptions> = {}) =>
  deliverDueMails(cloud.ctx, { random: () => 0.5, ...options });

let database: TestDatabase;
let mail: TestMailServer;
let cloud: TestCloud;
let owner: { id: number; client: BrowserClient };
let barrier: JournalBarrier;
let holder: KeyHolder;

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  cloud = await startTestCloud({
    database,
    clock,
    env: { SMTP_URL: mail.url, MAIL_FROM: 'Gatelink <gate@example.com>' },
  });
  owner = await signedInCustomer(cloud, 'Olga Owner');
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email: ADDRESS, email_verified_at: clock.now(), time_zone: 'Europe/Berlin' })
    .where('id', '=', owner.id)
    .execute();
  barrier = await journalBarrier(cloud.ctx, owner.id, 'Front gate');
  holder = await keyHolder(cloud.ctx, { customerId: owner.id, barrier, name: 'Demo Cleaning Ltd' });
});

afterEach(async () => {
  await cloud.ctx.db.deleteFrom('notification_choices').execute();
  mail.messages.length = 0;
});

afterAll(async () => {
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

async function tickEmail(): Promise<void> {
  await owner.client.get(`/barriers/${barrier.deviceId}`);
  const saved = await owner.client.post(`/barriers/${barrier.deviceId}/notifications`, {
    tell: 'every',
    by_email: '1',
  });
  expect(saved.status).toBe(303);
}

async function opening(outcome: 'opened' | 'forbidden' = 'opened'): Promise<number> {
  const [id] = await insertEntries(cloud.ctx, barrier, [
    { holder, outcome, actor: 'Driver 7', at: new Date('2026-11-27T14:01:00Z') },
  ]);
  return id!;
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

/** The unsubscribe address of the newest e-mail to the owner, as its List-Unsubscribe header gives it. */
function unsubscribeUrl(): string {
  const message = mail.lastTo(ADDRESS);
  expect(message).toBeDefined();
  const header = readMail(message!).headers.get('list-unsubscribe') ?? '';
  return /^<(.+)>$/.exec(header)?.[1] ?? '';
}

/** A POST as a mail client makes it (RFC 8058): no cookie, no token, the one field. */
function oneClick(path: string) {
  return cloud.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
}

async function emailChoice(): Promise<boolean | undefined> {
  const row = await cloud.ctx.db
    .selectFrom('notification_choices')
    .select('by_email')
    .where('customer_id', '=', owner.id)
    .executeTakeFirst();
  return row?.by_email;
}

describe('an e-mail of an opening', () => {
  it('is sent only to whom ticked the box', async () => {
    await opening();
    expect(await deliver()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
    expect(mail.messages).toEqual([]);
  });

  it('says barrier, outcome, actor, company and time in the zone, named, with the journal and one-click unsubscribe', async () => {
    await tickEmail();
    await opening();

    expect(await deliver()).toEqual({ sent: 1, failed: 0, gaveUp: 0 });

    const message = mail.lastTo(ADDRESS)!;
    const { headers, body } = readMail(message);
    expect(headers.get('subject')).toBe('Front gate: Opened');
    expect(body).toContain('Front gate: Opened');
    expect(body).toContain('By Driver 7 of Demo Cleaning Ltd (domain not confirmed)');
    expect(body).toContain('At 27 Nov 2026, 15:01 (Europe/Berlin)');
    expect(body).toContain(`${cloud.baseUrl}/barriers/${barrier.deviceId}/journal`);
    const url = unsubscribeUrl();
    expect(url).toMatch(
      new RegExp(
        `^${cloud.baseUrl}/notifications/unsubscribe/${barrier.deviceId}\\.${owner.id}\\.[\\w-]{43}$`,
      ),
    );
    expect(headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(body).toContain(url);
    // Nothing that signs anyone in: no code, no session, no sign-in link.
    expect(body).not.toMatch(/\/signin|\/c\/|code is/i);
  });

  it("tells a refused attempt in the journal's words", async () => {
    await tickEmail();
    await opening('forbidden');
    await deliver();
    expect(readMail(mail.lastTo(ADDRESS)!).headers.get('subject')).toBe(
      'Front gate: Refused: not in the key',
    );
  });
});

describe('one-click unsubscribe', () => {
  it('posted as a mail client posts it, stops the e-mails: the next opening sends none', async () => {
    await tickEmail();
    await opening();
    await deliver();
    const url = new URL(unsubscribeUrl());

    const answer = await oneClick(url.pathname);

    expect(answer.statusCode).toBe(200);
    expect(visibleText(answer.body)).toContain('You get no more e-mails of Front gate');
    expect(await emailChoice()).toBe(false);
    mail.messages.length = 0;
    await opening();
    expect(await deliver()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
    expect(mail.messages).toEqual([]);
  });

  it('also takes back the e-mails written and not yet sent', async () => {
    await tickEmail();
    await opening();
    await deliver();
    const url = new URL(unsubscribeUrl());
    await opening();
    expect((await fanOutJournal(cloud.ctx)).mails).toBe(1);

    expect((await oneClick(url.pathname)).statusCode).toBe(200);

    expect(await deliver()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
  });

  it('GET shows a button and changes nothing; the button posts and stops them', async () => {
    await tickEmail();
    await opening();
    await deliver();
    const url = new URL(unsubscribeUrl());

    const page = await cloud.app.inject({
      method: 'GET',
      url: url.pathname,
      headers: { accept: 'text/html' },
    });

    expect(page.statusCode).toBe(200);
    expect(visibleText(page.body)).toContain('Stop these e-mails');
    expect(page.body).toContain(`<form method="post" action="${url.pathname}">`);
    expect(await emailChoice()).toBe(true);
    // The button's form has no field: a browser posts it empty, as a form.
    const pressed = await cloud.app.inject({
      method: 'POST',
      url: url.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: cloud.baseUrl },
      payload: '',
    });
    expect(pressed.statusCode).toBe(200);
    expect(await emailChoice()).toBe(false);
    const again = await cloud.app.inject({
      method: 'GET',
      url: url.pathname,
      headers: { accept: 'text/html' },
    });
    expect(visibleText(again.body)).toContain('You get no e-mails of Front gate');
    expect(again.body).not.toContain('<form');
  });

  it('[attack:web.unsubscribe-forged] a forged, altered or unknown token is 404 and changes nothing', async () => {
    await tickEmail();
    await opening();
    await deliver();
    const path = new URL(unsubscribeUrl()).pathname;
    const token = path.split('/').pop()!;
    const [deviceId, customerId, mac] = token.split('.') as [string, string, string];
    const other = await signedInCustomer(cloud, 'Other');
    const flipped = `${mac.slice(0, 10)}${mac[10] === 'A' ? 'B' : 'A'}${mac.slice(11)}`;
    const forged = [
      `${deviceId}.${customerId}.${flipped}`,
      // The owner's own signature carried over to someone else, or to another barrier.
      `${deviceId}.${other.id}.${mac}`,
      `D0000000000.${customerId}.${mac}`,
      `${deviceId}.${customerId}`,
      'unknown',
      `${token}x`,
    ];
    for (const bad of forged) {
      const posted = await oneClick(`/notifications/unsubscribe/${encodeURIComponent(bad)}`);
      expect(posted.statusCode, bad).toBe(404);
      const shown = await cloud.app.inject({
        method: 'GET',
        url: `/notifications/unsubscribe/${encodeURIComponent(bad)}`,
        headers: { accept: 'text/html' },
      });
      expect(shown.statusCode, bad).toBe(404);
    }
    expect(await emailChoice()).toBe(true);
    expect(await cloud.ctx.db.selectFrom('notification_choices').select('customer_id').execute()).toEqual([
      { customer_id: owner.id },
    ]);
  });
});

describe('a genuine link of someone no longer in the household', () => {
  it('writes nothing and says there was nothing to stop', async () => {
    const former = await signedInCustomer(cloud, 'Fiona Former');
    const token = await unsubscribeToken(cloud.ctx.db, { deviceId: barrier.deviceId, customerId: former.id });

    const answer = await oneClick(`/notifications/unsubscribe/${token}`);

    expect(answer.statusCode).toBe(200);
    expect(visibleText(answer.body)).toContain('Nothing to stop here');
    expect(await cloud.ctx.db.selectFrom('notification_choices').selectAll().execute()).toEqual([]);
  });
});

describe('a mail server that fails', () => {
  it('is tried again after the schedule, without blocking anything, and the e-mail is sent once it takes it', async () => {
    await tickEmail();
    await opening();
    const failing = {
      ...cloud.ctx,
      mailer: { sendNotice: async () => Promise.reject(new Error('451 try later')) },
    };

    expect(await deliverDueMails(failing, { random: () => 0.5 })).toEqual({ sent: 0, failed: 1, gaveUp: 0 });
    expect(await deliver()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
    clock.advance(10_000);
    expect(await deliver()).toEqual({ sent: 1, failed: 0, gaveUp: 0 });
    const [row] = await cloud.ctx.db
      .selectFrom('opening_mail_outbox')
      .selectAll()
      .orderBy('id', 'desc')
      .execute();
    expect(row).toMatchObject({ attempts: 2, last_error: '451 try later', gave_up_at: null });
    expect(row?.sent_at).not.toBeNull();
  });
});
