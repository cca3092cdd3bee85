import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { deliverDueCompanyMails } from '../../cloud/links/mail/company-mail-delivery.js';
import type { Mailer } from '../../cloud/links/mail/mailer.js';
import { RETRY_DELAYS_MS } from '../../cloud/rules/events/retry-schedule.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { addEndpointRow, enqueuePings, outbox, setCallback } from '../support/event-company.js';
import { type ReceivedMail, startMailServer, type TestMailServer } from '../support/mail-server.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The e-mails to a company's members (docs/design.md section 11.7), from the change to a real SMTP server on
 * loopback: an operator approves or refuses the company, or the delivery marks one of its endpoints failing
 * (section 6.2); every member with an account hears of it once, in their zone, and one invited but not signed up yet does not.
 */
const clock = new FakeClock(new Date('2026-11-27T14:02:00Z'));
const LOCAL = { allowPrivateAddresses: true, timeoutMs: 500, random: () => 0.5 };
const deliverMails = () => deliverDueCompanyMails(cloud.ctx, { random: () => 0.5 });

let database: TestDatabase;
let mail: TestMailServer;
let cloud: TestCloud;
let receiver: WebhookReceiver;

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  cloud = await startTestCloud({
    database,
    clock,
    env: { SMTP_URL: mail.url, MAIL_FROM: 'Gatelink <gate@example.com>' },
  });
  receiver = new WebhookReceiver();
  await receiver.start(Buffer.alloc(32).toString('base64'));
});

afterEach(() => {
  mail.messages.length = 0;
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

/** A company waiting for approval, its owner and a second member with confirmed addresses, and an invitee. */
async function companyWithMembers(name: string) {
  const owner = await companyOwner(cloud, { name, email: `owner@${slug(name)}.example` });
  const member = await cloud.ctx.db
    .insertInto('customers')
    .values({
      display_name: 'Dev',
      email: `dev@${slug(name)}.example`,
      email_verified_at: clock.now(),
      time_zone: 'Europe/Berlin',
      created_at: clock.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email_verified_at: clock.now() })
    .where('id', '=', owner.customerId)
    .execute();
  await cloud.ctx.db
    .insertInto('company_members')
    .values([
      {
        company_id: owner.companyId,
        customer_id: member.id,
        email: `dev@${slug(name)}.example`,
        role: 'member',
        added_at: clock.now(),
      },
      {
        company_id: owner.companyId,
        customer_id: null,
        email: `invited@${slug(name)}.example`,
        role: 'member',
        added_at: clock.now(),
      },
    ])
    .execute();
  return { ...owner, domain: `${slug(name)}.example` };
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z]+/g, '-');
}

/** A message as a mail client reads it: the subject, and the body with its quoted-printable undone. */
function readMail(message: ReceivedMail): { subject: string; body: string } {
  const [head = '', ...rest] = message.raw.split(/\r?\n\r?\n/);
  const subject = /^Subject: (.*)$/im.exec(head.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? '';
  let body = rest.join('\n\n');
  if (/content-transfer-encoding: quoted-printable/i.test(head)) {
    const bytes = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    body = Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return { subject, body: body.replace(/\r\n/g, '\n') };
}

function recipients(): string[] {
  return mail.messages.flatMap((message) => message.to).sort();
}

describe("e-mails to a company's members", () => {
  it('tells every member with an account once when an operator approves the company, with where to go next', async () => {
    const company = await companyWithMembers('Approved Couriers');
    const approval = await cloud.ops('POST', `/ops/companies/${company.companyId}/approve`);
    expect(approval.status).toBe(200);
    expect(await deliverMails()).toEqual({ sent: 2, failed: 0, gaveUp: 0 });
    expect(recipients()).toEqual([`dev@${company.domain}`, `owner@${company.domain}`]);
    const { subject, body } = readMail(mail.lastTo(`dev@${company.domain}`)!);
    expect(subject).toBe('Approved Couriers is approved on Gatelink');
    expect(body).toContain("Gatelink answers the company's calls from now on");
    expect(body).toContain(`${cloud.baseUrl}/company/${company.companyId}/access`);
    expect(body).not.toMatch(/code|token/i);
    // Once: a second look sends nothing, and an approval refused (already approved) writes no e-mail.
    expect((await cloud.ops('POST', `/ops/companies/${company.companyId}/approve`)).status).toBe(409);
    expect(await deliverMails()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
  });

  it("tells the operator's reason when the company is refused", async () => {
    const company = await companyWithMembers('Refused Removals');
    const refusal = await cloud.ops('POST', `/ops/companies/${company.companyId}/reject`, {
      reason: 'The contact address bounces; give one that answers.',
    });
    expect(refusal.status).toBe(200);
    await deliverMails();
    expect(recipients()).toEqual([`dev@${company.domain}`, `owner@${company.domain}`]);
    const { subject, body } = readMail(mail.lastTo(`owner@${company.domain}`)!);
    expect(subject).toBe('Refused Removals was not approved on Gatelink');
    expect(body).toContain('giving this reason: The contact address bounces; give one that answers.');
    expect(body).toContain(`${cloud.baseUrl}/company/${company.companyId}`);
  });

  it("tells when the callback address is marked failing, in each reader's zone; not once it was mended or removed", async () => {
    const company = await companyWithMembers('Failing Hooks');
    await cloud.ops('POST', `/ops/companies/${company.companyId}/approve`);
    await deliverMails();
    mail.messages.length = 0;
    receiver.answer = () => ({ status: 500 });
    await setCallback(cloud.ctx, company.companyId, receiver.url);
    await enqueuePings(cloud.ctx, company.companyId);
    await deliverDue(cloud.ctx, LOCAL);
    for (const delay of RETRY_DELAYS_MS.slice(0, -1)) {
      clock.advance(delay);
      await deliverDue(cloud.ctx, LOCAL);
    }
    // Retrying is not failing: nobody is e-mailed while the schedule runs.
    expect(await deliverMails()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
    clock.advance(RETRY_DELAYS_MS.at(-1)!);
    await deliverDue(cloud.ctx, LOCAL);
    const failedAt = clock.now();
    expect(await deliverMails()).toEqual({ sent: 2, failed: 0, gaveUp: 0 });
    const owner = readMail(mail.lastTo(`owner@${company.domain}`)!);
    expect(owner.subject).toBe(
      `Failing Hooks's callback address at ${new URL(receiver.url).host} is failing`,
    );
    expect(owner.body).toContain(`could not deliver an event to ${receiver.url}`);
    expect(owner.body).toContain('the last attempt: answered 500; only a 2xx status is a delivery');
    expect(owner.body).toContain(`${cloud.baseUrl}/company/${company.companyId}/events`);
    // The owner chose no zone (UTC); the other member reads Berlin's time.
    const hour = failedAt.getUTCHours();
    expect(owner.body).toMatch(
      new RegExp(`Since \\d+ \\w+ \\d{4}, ${String(hour).padStart(2, '0')}:\\d\\d UTC`),
    );
    const dev = readMail(mail.lastTo(`dev@${company.domain}`)!);
    expect(dev.body).toMatch(/Since \d+ \w+ \d{4}, \d\d:\d\d \(Europe\/Berlin\)/);
    expect(dev.body).not.toContain(owner.body.match(/Since [^,]+, \d\d:\d\d/)![0]);

    // Failing again, but "Retry now" pressed before the e-mail went: it is not sent.
    mail.messages.length = 0;
    const endpoint = await cloud.ctx.db
      .updateTable('endpoints')
      .set({ failing_since: null, failing_url: null, paused_until: null })
      .where('company_id', '=', company.companyId)
      .returning('id')
      .executeTakeFirstOrThrow();
    const failingMail = {
      company_id: company.companyId,
      endpoint_id: endpoint.id,
      customer_id: company.customerId,
      kind: 'endpoint_failing' as const,
      detail: 'answered 500',
      created_at: clock.now(),
      next_attempt_at: clock.now(),
    };
    await cloud.ctx.db.insertInto('company_mails').values(failingMail).execute();
    expect(await deliverMails()).toEqual({ sent: 0, failed: 1, gaveUp: 1 });
    // Nor once the endpoint was removed, failing as it was.
    await cloud.ctx.db
      .updateTable('endpoints')
      .set((eb) => ({ failing_since: clock.now(), failing_url: eb.ref('url') }))
      .where('id', '=', endpoint.id)
      .execute();
    await cloud.ctx.db.insertInto('company_mails').values(failingMail).execute();
    await setCallback(cloud.ctx, company.companyId, null);
    expect(await deliverMails()).toEqual({ sent: 0, failed: 1, gaveUp: 1 });
    expect(mail.messages).toEqual([]);
  });

  it('names the failing endpoint alone when one of two fails, and the other goes on', async () => {
    const company = await companyWithMembers('Split Hooks');
    await cloud.ops('POST', `/ops/companies/${company.companyId}/approve`);
    await deliverMails();
    mail.messages.length = 0;
    receiver.answer = () => ({ status: 204 });
    await setCallback(cloud.ctx, company.companyId, receiver.url);
    const down = 'http://127.0.0.1:9/split-hooks';
    const downId = await addEndpointRow(cloud.ctx, company.companyId, down);
    await enqueuePings(cloud.ctx, company.companyId);
    await deliverDue(cloud.ctx, LOCAL);
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await deliverDue(cloud.ctx, LOCAL);
    }
    // The working endpoint took the event at once; only the other one fails.
    expect((await outbox(cloud.ctx, company.companyId))[0]?.delivered_at).not.toBeNull();
    expect((await outbox(cloud.ctx, company.companyId, downId))[0]?.delivered_at).toBeNull();
    expect(await deliverMails()).toEqual({ sent: 2, failed: 0, gaveUp: 0 });
    const rows = await cloud.ctx.db
      .selectFrom('company_mails')
      .select('endpoint_id')
      .where('company_id', '=', company.companyId)
      .where('kind', '=', 'endpoint_failing')
      .execute();
    expect(rows.map((row) => row.endpoint_id)).toEqual([downId, downId]);
    const owner = readMail(mail.lastTo(`owner@${company.domain}`)!);
    expect(owner.subject).toBe(`Split Hooks's callback address at ${new URL(down).host} is failing`);
    expect(owner.body).toContain(`could not deliver an event to ${down}\n`);
    expect(owner.body).toContain('the last attempt: could not connect: ECONNREFUSED');
    expect(owner.body).not.toContain(receiver.url);
    expect(readMail(mail.lastTo(`dev@${company.domain}`)!).body).not.toContain(receiver.url);
  });

  it('tries again when the mail server fails, and sends once it answers', async () => {
    const company = await companyWithMembers('Patient Plumbers');
    await cloud.ops('POST', `/ops/companies/${company.companyId}/approve`);
    const refusing: Pick<Mailer, 'sendNotice'> = {
      sendNotice: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:25');
      },
    };
    const down = await deliverDueCompanyMails({ ...cloud.ctx, mailer: refusing }, { random: () => 0.5 });
    expect(down).toEqual({ sent: 0, failed: 2, gaveUp: 0 });
    const rows = await cloud.ctx.db
      .selectFrom('company_mails')
      .select(['last_error', 'attempts'])
      .where('company_id', '=', company.companyId)
      .execute();
    expect(rows.map((row) => row.last_error)).toEqual([
      'connect ECONNREFUSED 127.0.0.1:25',
      'connect ECONNREFUSED 127.0.0.1:25',
    ]);
    // Not before its retry is due, then once.
    expect(await deliverMails()).toEqual({ sent: 0, failed: 0, gaveUp: 0 });
    clock.advance(60_000);
    expect(await deliverMails()).toEqual({ sent: 2, failed: 0, gaveUp: 0 });
    expect(recipients()).toEqual([`dev@${company.domain}`, `owner@${company.domain}`]);
  });
});
