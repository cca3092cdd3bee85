import { WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { MAX_ENDPOINTS } from '../../cloud/rules/events/endpoints.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { EVENT_EXAMPLES, type EventKind } from '../../shared/company-api/events.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { standardVerifier } from '../support/standard-webhooks.js';
import { type Received, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * A company's several endpoints (docs/design.md section 6.2), as a member sets them up in the company area: two
 * receivers on loopback, each taking its own kinds and verifying its deliveries with its own signing secret
 * (the `standardwebhooks` package, as a company's receiver would), neither able to verify the other's; an event
 * sent again to one reaches that one only, and "Retry now" on one leaves the other's schedule alone; the
 * eleventh endpoint is refused; another company's endpoint is no page. Deliveries run on a fake clock.
 */
const SECRET = /whsec_[A-Za-z0-9+/]{43}=/g;
const LOCAL = { allowPrivateAddresses: true, timeoutMs: 500, random: () => 0.5 };
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let erp: WebhookReceiver;
let chat: WebhookReceiver;
let owner: CompanyOwner;

/** An endpoint as its page showed it once: its id, its page and its signing secret. */
interface Made {
  id: string;
  path: string;
  secret: string;
}
let toErp: Made;
let toChat: Made;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  const key = (JSON.parse(published.body) as { key: string }).key;
  erp = new WebhookReceiver();
  chat = new WebhookReceiver();
  await erp.start(key);
  await chat.start(key);
  owner = await companyOwner(cloud, { name: 'Two Receivers Ltd' });
});

afterEach(() => {
  erp.answer = () => ({ status: 204 });
  chat.answer = () => ({ status: 204 });
});

afterAll(async () => {
  await erp?.stop();
  await chat?.stop();
  await cloud?.stop();
  await database?.close();
});

const standardVerify = standardVerifier(clock);
const base = () => `/company/${owner.companyId}`;

/** Adds an endpoint through the list page's form; its answer is the endpoint's page, the secret shown once. */
async function added(url: string): Promise<Made> {
  await owner.client.get(`${base()}/callback`);
  const answer = await owner.client.post(`${base()}/callback`, { callback_url: url });
  expect(answer.status).toBe(200);
  expect(visibleText(answer.html)).toContain('Endpoint added.');
  const secrets = answer.html.match(SECRET) ?? [];
  expect(secrets).toHaveLength(1);
  const [, path, id] = /action="(\/company\/\d+\/callback\/(\d+))\/kinds"/.exec(answer.html) ?? [];
  expect(id).toBeDefined();
  return { id: id!, path: path!, secret: secrets[0]! };
}

/** Events of the company, each committed on its own as the change that causes it would; their ids. */
async function happened(...kinds: EventKind[]): Promise<string[]> {
  const ids: string[] = [];
  for (const type of kinds) {
    ids.push(
      await cloud.ctx.db.transaction().execute((trx) =>
        enqueueEvent(trx, {
          companyId: owner.companyId,
          type,
          at: clock.now(),
          data: EVENT_EXAMPLES[type].data,
        }),
      ),
    );
  }
  return ids;
}

function taken(receiver: WebhookReceiver): Received[] {
  return receiver.received.splice(0);
}

/** Each delivery verifies under its own endpoint's secret, and under no other's. */
function signedFor(deliveries: Received[], own: Made, other: Made): void {
  for (const got of deliveries) {
    expect(standardVerify(own.secret, got)).toMatchObject({ id: got.id, type: got.event.type });
    expect(() => standardVerify(other.secret, got)).toThrow(WebhookVerificationError);
    expect(got.verified).toBe(true);
  }
}

async function endpointRows() {
  return cloud.ctx.db
    .selectFrom('endpoints')
    .select(['id', 'url', 'kinds', 'paused_until', 'failing_since'])
    .where('company_id', '=', owner.companyId)
    .orderBy('id')
    .execute();
}

describe("a company's endpoints", () => {
  it('send each receiver only its kinds, each signed with its own secret and not the other’s', async () => {
    toErp = await added(erp.url);
    toChat = await added(chat.url);
    expect(toErp.secret).not.toBe(toChat.secret);
    await owner.client.post(`${toErp.path}/kinds`, {
      take: 'these',
      kinds: ['request.claimed', 'request.issued'],
    });
    const saved = await owner.client.post(`${toChat.path}/kinds`, {
      take: 'these',
      kinds: ['open.succeeded'],
    });
    expect(visibleText(saved.html)).toContain('The kinds are saved.');
    const list = visibleText((await owner.client.get(`${base()}/callback`)).html);
    expect(list).toContain(`2 endpoints ${erp.url} Working 2 of 14 kinds · Nothing waiting Manage`);
    expect(list).toContain(`${chat.url} Working 1 of 14 kinds · Nothing waiting Manage`);

    const [claimed, opened, issued] = await happened(
      'request.claimed',
      'open.succeeded',
      'request.issued',
      'key.expired',
    );
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 3, failed: 0 });
    const atErp = taken(erp);
    const atChat = taken(chat);
    expect(atErp.map((got) => got.id)).toEqual([claimed, issued]);
    expect(atChat.map((got) => got.id)).toEqual([opened]);
    signedFor(atErp, toErp, toChat);
    signedFor(atChat, toChat, toErp);

    // A test event goes to every endpoint, whatever the kinds, each signed for its own.
    await owner.client.get(`${base()}/events`);
    expect((await owner.client.post(`${base()}/events/test`)).status).toBe(303);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 2, failed: 0 });
    const erpPing = taken(erp);
    const chatPing = taken(chat);
    expect(erpPing.map((got) => got.event.type)).toEqual(['ping']);
    expect(chatPing.map((got) => got.id)).toEqual(erpPing.map((got) => got.id));
    signedFor(erpPing, toErp, toChat);
    signedFor(chatPing, toChat, toErp);

    // The event's page says where it stands at each endpoint.
    const page = visibleText((await owner.client.get(`${base()}/events/${claimed}`)).html);
    expect(page).toMatch(new RegExp(`Where it stands ${escaped(erp.url)} Delivered \\d+ \\w+ \\d{4}`));
    expect(page).toContain(
      `${chat.url} Not sent: this endpoint does not take request.claimed events (or was added after).`,
    );
    // The log, narrowed to one endpoint, shows its attempts only, each saying where it went.
    const erpLog = visibleText((await owner.client.get(`${base()}/events?endpoint=${toErp.id}`)).html);
    expect(erpLog).toContain(`To ${erp.url}`);
    expect(erpLog).not.toContain(`To ${chat.url}`);
    expect(erpLog.match(/ · attempt 1 · Delivered/g)).toHaveLength(3);
  });

  it('sends an event again to the endpoint asked for only, with the same webhook-id', async () => {
    const [claimed] = await happened('request.claimed');
    await deliverDue(cloud.ctx, LOCAL);
    const first = taken(erp);
    expect(first.map((got) => got.id)).toEqual([claimed]);
    expect(taken(chat)).toEqual([]);

    const page = await owner.client.get(`${base()}/events/${claimed}`);
    expect(page.html).toContain(`aria-label="Send again: ${erp.url}"`);
    expect(page.html).toContain(`aria-label="Send it anyway: ${chat.url}"`);
    const resent = await owner.client.post(`${base()}/events/${claimed}/resend`, { endpoint: toErp.id });
    expect(resent.status).toBe(303);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 1, failed: 0 });
    const again = taken(erp);
    expect(again.map((got) => got.id)).toEqual([claimed]);
    expect(again[0]!.body).toBe(first[0]!.body);
    signedFor(again, toErp, toChat);
    expect(taken(chat)).toEqual([]);

    // Sent anyway to the endpoint that does not take its kind: that one gets it, signed for it, once.
    await owner.client.post(`${base()}/events/${claimed}/resend`, { endpoint: toChat.id });
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 1, failed: 0 });
    const anyway = taken(chat);
    expect(anyway.map((got) => got.id)).toEqual([claimed]);
    signedFor(anyway, toChat, toErp);
    expect(taken(erp)).toEqual([]);
  });

  it('"Retry now" on one endpoint resumes that one and leaves the other paused', async () => {
    erp.answer = () => ({ status: 500 });
    chat.answer = () => ({ status: 503 });
    await owner.client.get(`${base()}/events`);
    await owner.client.post(`${base()}/events/test`);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 0, failed: 2 });
    const [ping] = taken(erp).map((got) => got.id);
    expect(taken(chat).map((got) => got.id)).toEqual([ping]);
    const paused = await endpointRows();
    expect(paused.every((row) => row.paused_until !== null)).toBe(true);
    const page = await owner.client.get(`${base()}/events`);
    expect(visibleText(page.html).match(/Paused until/g)).toHaveLength(2);
    expect(page.html).toContain(`aria-label="Retry now: ${erp.url}"`);
    expect(page.html).toContain(`aria-label="Retry now: ${chat.url}"`);

    erp.answer = () => ({ status: 204 });
    chat.answer = () => ({ status: 204 });
    const retried = await owner.client.post(`${base()}/events/retry`, { endpoint: toChat.id });
    expect(retried.status).toBe(303);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 1, failed: 0 });
    expect(taken(chat).map((got) => got.id)).toEqual([ping]);
    expect(taken(erp)).toEqual([]);
    const after = await endpointRows();
    expect(after.find((row) => String(row.id) === toErp.id)!.paused_until).toEqual(
      paused.find((row) => String(row.id) === toErp.id)!.paused_until,
    );
    const text = visibleText((await owner.client.get(`${base()}/events`)).html);
    expect(text).toContain(`${erp.url} Paused until`);
    expect(text).toContain(`${chat.url} Working`);

    // The other one keeps its own schedule: its retry comes when its pause is over.
    clock.advance(60_000);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 1, failed: 0 });
    expect(taken(erp).map((got) => got.id)).toEqual([ping]);
  });

  it(`refuses the endpoint after the ${MAX_ENDPOINTS}th with the reason, and adds nothing`, async () => {
    const already = (await endpointRows()).length;
    for (let n = already; n < MAX_ENDPOINTS; n++) await added(`${erp.url}?n=${n}`);
    const list = await owner.client.get(`${base()}/callback`);
    expect(visibleText(list.html)).toContain(
      `You have ${MAX_ENDPOINTS} endpoints, the most there may be: remove one before adding another.`,
    );
    expect(list.html).not.toContain('name="callback_url"');
    const refused = await owner.client.post(`${base()}/callback`, { callback_url: `${chat.url}?n=11` });
    expect(refused.status).toBe(409);
    expect(refused.html).not.toMatch(SECRET);
    expect(visibleText(refused.html)).toContain(
      'A company has at most 10 callback endpoints; remove one before adding another.',
    );
    expect(await endpointRows()).toHaveLength(MAX_ENDPOINTS);
    // Removing one makes room again.
    const last = (await endpointRows()).at(-1)!;
    const removed = await owner.client.post(`${base()}/callback/${last.id}/remove`);
    expect(visibleText(removed.html)).toContain(
      `Endpoint removed: events are no longer sent to ${last.url}.`,
    );
    expect(removed.html).toContain('name="callback_url"');
  });

  it("[attack:web.endpoint-of-another-company] answers another company's endpoint with 404 and changes nothing", async () => {
    const stranger = await companyOwner(cloud, { name: 'Stranger Receivers' });
    const theirs = `/company/${stranger.companyId}`;
    await stranger.client.get(`${theirs}/callback`);
    const before = await endpointRows();
    const secretsBefore = await cloud.ctx.db
      .selectFrom('callback_secrets')
      .select(['id', 'retires_at'])
      .where('company_id', '=', owner.companyId)
      .orderBy('id')
      .execute();
    for (const path of [`${theirs}/callback/${toErp.id}`, toErp.path]) {
      expect((await stranger.client.get(path)).status, path).toBe(404);
      const forms: [string, Record<string, string | string[]>][] = [
        ['', { callback_url: 'http://127.0.0.1:9/stolen' }],
        ['/kinds', { take: 'every' }],
        ['/signing-secret', { replaces: '0' }],
        ['/signing-secret/1/expire', {}],
        ['/remove', {}],
      ];
      for (const [form, fields] of forms) {
        const answer = await stranger.client.post(`${path}${form}`, fields);
        expect(answer.status, `${path}${form}`).toBe(404);
        expect(answer.html).not.toMatch(SECRET);
      }
    }
    // Their own events pages, naming our endpoint: no such endpoint of theirs.
    const [claimed] = await happened('request.claimed');
    await stranger.client.get(`${theirs}/events`);
    const retry = await stranger.client.post(`${theirs}/events/retry`, { endpoint: toErp.id });
    expect(retry.status).toBe(404);
    expect(visibleText(retry.html)).toContain('No such endpoint of the company');
    const resend = await stranger.client.post(`${theirs}/events/${claimed}/resend`, { endpoint: toErp.id });
    expect(resend.status).toBe(404);
    // Not a number, or past what an id can be, is no endpoint either.
    for (const id of ['abc', '0', '-1', '1.5', '2147483648', '99999999999999999999']) {
      expect((await owner.client.get(`${base()}/callback/${id}`)).status, id).toBe(404);
    }
    expect(await endpointRows()).toEqual(before);
    expect(
      await cloud.ctx.db
        .selectFrom('callback_secrets')
        .select(['id', 'retires_at'])
        .where('company_id', '=', owner.companyId)
        .orderBy('id')
        .execute(),
    ).toEqual(secretsBefore);
    // The event written meanwhile goes to our erp endpoint as it takes request.claimed, and nowhere else.
    expect(await deliverDue(cloud.ctx, LOCAL)).toMatchObject({ failed: 0 });
    expect(taken(erp).map((got) => got.id)).toContain(claimed);
    expect(taken(chat)).toEqual([]);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
