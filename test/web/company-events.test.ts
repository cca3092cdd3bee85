import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { RETRY_DELAYS_MS } from '../../cloud/rules/events/retry-schedule.js';
import { EVENT_EXAMPLES } from '../../shared/company-api/events.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings, outbox, setCallback } from '../support/event-company.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `/company/<id>/events` (docs/design.md sections 6 and 6.2): a member sees whether the company's endpoint
 * receives its events and the delivery log, sends a test event that arrives signed like any other, watches a
 * failing endpoint and resumes it with its "Retry now"; a member of another company sees none of it.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const LOCAL = { allowPrivateAddresses: true, timeoutMs: 500, random: () => 0.5 };
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let owner: CompanyOwner;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  receiver = new WebhookReceiver();
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  await receiver.start((JSON.parse(published.body) as { key: string }).key);
  owner = await companyOwner(cloud, { name: 'Parcel Events' });
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

const path = () => `/company/${owner.companyId}/events`;

/** The company's one endpoint, as the page's forms name it. */
async function endpointId(): Promise<string> {
  const row = await cloud.ctx.db
    .selectFrom('endpoints')
    .select('id')
    .where('company_id', '=', owner.companyId)
    .executeTakeFirstOrThrow();
  return String(row.id);
}

describe("a company's events page", () => {
  it('says nothing is sent and where to add an endpoint while there is none, and refuses a test event', async () => {
    const page = await owner.client.get(path());
    expect(page.status).toBe(200);
    expect(visibleText(page.html)).toContain('No endpoint Nothing is sent. Add an endpoint');
    expect(page.html).toContain(`href="/company/${owner.companyId}/callback"`);
    expect(page.html).toContain('aria-current="page"');
    const refused = await owner.client.post(`${path()}/test`);
    expect(refused.status).toBe(409);
    expect(visibleText(refused.html)).toContain('Add an endpoint first');
  });

  it('sends a test event through the outbox, signed, and logs its attempt', async () => {
    await setCallback(cloud.ctx, owner.companyId, receiver.url);
    await owner.client.get(path());
    const sent = await owner.client.post(`${path()}/test`);
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`${path()}?done=test`);
    await deliverDue(cloud.ctx, LOCAL);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.verified).toBe(true);
    expect(receiver.received[0]!.event.type).toBe('ping');

    const page = await owner.client.get(sent.location!);
    const text = visibleText(page.html);
    expect(text).toContain('A test event joined');
    expect(text).toContain(`${receiver.url} Working`);
    expect(page.html).toContain(`href="/company/${owner.companyId}/callback/${await endpointId()}"`);
    expect(text).toContain('ping · attempt 1 · Delivered');
    expect(text).toContain(`To ${receiver.url}`);
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
  });

  it('[attack:web.event-resent-by-another-company] sends a delivered event again with the same webhook-id and body, counting its attempts on; only for its company', async () => {
    const first = receiver.received.at(-1)!;
    const page = await owner.client.get(path());
    const action = `${path()}/${first.id}/resend`;
    expect(page.html).toContain(`action="${action}"`);
    const endpoint = await endpointId();
    expect(page.html).toContain(`name="endpoint" value="${endpoint}"`);
    const resent = await owner.client.post(action, { endpoint });
    expect(resent.status).toBe(303);
    expect(resent.location).toBe(`${path()}/${first.id}?done=resent`);
    await deliverDue(cloud.ctx, LOCAL);
    const again = receiver.received.at(-1)!;
    expect(receiver.received).toHaveLength(2);
    expect(again.id).toBe(first.id);
    expect(again.body).toBe(first.body);
    expect(again.verified).toBe(true);
    const text = visibleText((await owner.client.get(resent.location!)).html);
    expect(text).toContain('The event is sent again, with the same webhook-id and body');
    expect(text).toContain('Attempt 2 · Delivered');
    expect(text).toContain('Attempt 1 · Delivered');
    // An event of another company, one made up, one not delivered yet, and an endpoint that is not the
    // company's are each told so; nothing is sent.
    const waiting = await cloud.ctx.db
      .selectFrom('events')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .executeTakeFirstOrThrow();
    const place = cloud.ctx.db
      .updateTable('endpoint_events')
      .where('event_id', '=', waiting.id)
      .where('endpoint_id', '=', Number(endpoint));
    await place.set({ delivered_at: null }).execute();
    const notYet = await owner.client.post(`${path()}/${waiting.id}/resend`, { endpoint });
    expect(notYet.status).toBe(409);
    expect(visibleText(notYet.html)).toContain(`That event is not delivered to ${receiver.url} yet`);
    await place.set({ delivered_at: clock.now() }).execute();
    expect(
      (await owner.client.post(`${path()}/00000000-0000-4000-8000-000000000000/resend`, { endpoint })).status,
    ).toBe(404);
    expect((await owner.client.post(`${path()}/not-an-id/resend`, { endpoint })).status).toBe(404);
    for (const other of [undefined, '0', 'x', '99999999', '2147483648']) {
      const refused = await owner.client.post(action, other === undefined ? {} : { endpoint: other });
      expect(refused.status, other).toBe(404);
      expect(visibleText(refused.html)).toContain('No such endpoint of the company');
    }
    const stranger = await companyOwner(cloud, { name: 'Stranger Events' });
    await stranger.client.get(`/company/${stranger.companyId}/events`);
    const foreign = await stranger.client.post(`/company/${stranger.companyId}/events/${first.id}/resend`, {
      endpoint,
    });
    expect(foreign.status).toBe(404);
    expect(await deliverDue(cloud.ctx, LOCAL)).toEqual({ delivered: 0, failed: 0 });
  });

  it('shows a failing endpoint with its last error, and "Retry now" resumes it', async () => {
    receiver.answer = () => ({ status: 500 });
    await enqueuePings(cloud.ctx, owner.companyId);
    await deliverDue(cloud.ctx, LOCAL);
    let text = visibleText((await owner.client.get(path())).html);
    expect(text).toMatch(/Paused until [^·]*\b\d{2}:\d{2}:\d{2} UTC/);
    expect(text).toContain('Last error: answered 500; only a 2xx status is a delivery');
    expect(text).toContain('Failed, will retry');
    // To the second, in the reader's zone (UTC here): the retry is seconds away, not minutes.
    expect(text).toMatch(/Next attempt after [^·]*\b\d{2}:\d{2}:\d{2} UTC/);

    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await deliverDue(cloud.ctx, LOCAL);
    }
    const failing = await owner.client.get(path());
    text = visibleText(failing.html);
    expect(text).toMatch(/Failing since [^·]*\b\d{2}:\d{2}:\d{2} UTC/);
    expect(text).toContain('Failed, last attempt');
    expect(text).toContain('1 event is waiting');
    const endpoint = await endpointId();
    expect(failing.html).toContain(`aria-label="Retry now: ${receiver.url}"`);
    expect(failing.html).toContain(`name="endpoint" value="${endpoint}"`);
    // A form naming no endpoint of the company resumes nothing.
    const unknown = await owner.client.post(`${path()}/retry`, { endpoint: '99999999' });
    expect(unknown.status).toBe(404);
    expect(visibleText(unknown.html)).toContain('No such endpoint of the company');
    expect((await owner.client.post(`${path()}/retry`)).status).toBe(404);
    expect(visibleText((await owner.client.get(path())).html)).toContain('Failing since');

    receiver.answer = () => ({ status: 204 });
    const retried = await owner.client.post(`${path()}/retry`, { endpoint });
    expect(retried.location).toBe(`${path()}?done=retry`);
    await deliverDue(cloud.ctx, LOCAL);
    text = visibleText((await owner.client.get(retried.location!)).html);
    expect(text).toContain('Delivery resumed');
    expect(text).toContain('Every event has been delivered.');
    // The attempt after "Retry now" goes on from the schedule's fifteen, rather than being attempt 1 again.
    expect(text).toContain(`ping · attempt ${RETRY_DELAYS_MS.length + 2} · Delivered`);
  });

  it('pages the log, newest first', async () => {
    await enqueuePings(cloud.ctx, owner.companyId, 45);
    await deliverDue(cloud.ctx, LOCAL);
    const first = await owner.client.get(path());
    const older = /href="([^"]+before=\d+)"/.exec(first.html)?.[1];
    expect(older).toBeDefined();
    const second = await owner.client.get(older!.replaceAll('&amp;', '&'));
    expect(visibleText(second.html)).toContain('Delivery log, older attempts');
    expect(visibleText(second.html)).toContain('Newest attempts');
  });

  it('narrows the log to a kind and an outcome, keeps the filter while paging, and drops one that makes no sense', async () => {
    await cloud.ctx.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        companyId: owner.companyId,
        type: 'open.succeeded',
        at: clock.now(),
        data: EVENT_EXAMPLES['open.succeeded'].data,
      }),
    );
    // More delivered pings than one page holds, whatever the tests before left.
    await enqueuePings(cloud.ctx, owner.companyId, 55);
    await deliverDue(cloud.ctx, LOCAL);
    const lines = (html: string) =>
      visibleText(html)
        .match(/(ping|open\.succeeded) · attempt \d+ · [A-Za-z, ]+/g)
        ?.map((line) => line.trim()) ?? [];
    const opened = await owner.client.get(`${path()}?kind=open.succeeded`);
    expect(lines(opened.html)).toEqual(['open.succeeded · attempt 1 · Delivered']);
    expect(opened.html).toMatch(/<option value="open.succeeded" selected/);
    const failedPings = lines((await owner.client.get(`${path()}?kind=ping&outcome=failed`)).html);
    expect(failedPings.length).toBeGreaterThan(0);
    expect(failedPings.every((line) => line.startsWith('ping') && !line.endsWith('Delivered'))).toBe(true);
    const delivered = await owner.client.get(`${path()}?kind=ping&outcome=delivered`);
    const older = /href="([^"]+before=\d+)"/.exec(delivered.html)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toContain('kind=ping&outcome=delivered');
    expect(lines((await owner.client.get(older!)).html).every((line) => line.endsWith('Delivered'))).toBe(
      true,
    );
    const nonsense = await owner.client.get(`${path()}?kind=open.nothing&outcome=maybe`);
    expect(nonsense.status).toBe(200);
    expect(lines(nonsense.html).length).toBeGreaterThan(1);
  });

  it("[attack:events.hostile-answer] shows an event's body and each attempt's request and answer: status, headers, the first KiB, the time taken", async () => {
    const refusal = `{"error":"bad signature"}${'x'.repeat(3000)}`;
    receiver.answer = () => ({ status: 400, headers: { 'X-Request-Id': 'req-7' }, body: refusal });
    await cloud.ctx.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        companyId: owner.companyId,
        type: 'open.succeeded',
        at: clock.now(),
        data: EVENT_EXAMPLES['open.succeeded'].data,
      }),
    );
    await deliverDue(cloud.ctx, LOCAL);
    // An endless answer to a delivery is read to its first KiB, and the attempt counts as delivered; a NUL in
    // it, which the database cannot store, is kept as a replacement character rather than failing the turn.
    receiver.answer = () => ({ status: 200, body: `${'y'.repeat(100)}\u0000${'y'.repeat(5_000_000)}` });
    clock.advance(RETRY_DELAYS_MS[0]!);
    await deliverDue(cloud.ctx, LOCAL);
    const sent = receiver.received.at(-1)!;
    expect(sent.event.type).toBe('open.succeeded');

    const log = await owner.client.get(`${path()}?kind=open.succeeded`);
    const link = `${path()}/${sent.id}`;
    expect(log.html).toContain(`href="${link}"`);
    const page = await owner.client.get(link);
    expect(page.status).toBe(200);
    const text = visibleText(page.html);
    expect(text).toContain('open.succeeded Delivered');
    expect(text).toContain(sent.id);
    // The body as sent, indented for reading.
    expect(text).toContain(`"actor": "${(sent.event.data as { actor: string }).actor}"`);
    expect(text).toMatch(/Attempt 2 · Delivered · HTTP 200 · \d+ ms/);
    expect(text).toMatch(/Attempt 1 · Failed, will retry · HTTP 400 · \d+ ms/);
    expect(text).toContain('answered 400; only a 2xx status is a delivery');
    // The request's headers, signatures included, as the endpoint received them.
    expect(text).toContain(`webhook-id ${sent.id}`);
    expect(text).toContain(`webhook-signature ${receiver.received.at(-2)!.signature}`);
    expect(text).toContain(`POST ${receiver.url}`);
    // The answer's headers and the first KiB of its body, said to be cut.
    expect(text).toContain('X-Request-Id req-7');
    expect(text).toContain(refusal.slice(0, 1024));
    expect(text).not.toContain(refusal.slice(0, 1025));
    expect(text).toContain(`${'y'.repeat(100)}\uFFFD${'y'.repeat(923)}`);
    expect(text).not.toContain(`\uFFFD${'y'.repeat(924)}`);
    expect(text.match(/The first KiB of a longer body/g)).toHaveLength(2);
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
    receiver.answer = () => ({ status: 204 });
  });

  it("narrows the log to a span of time read in the reader's zone", async () => {
    // Three pings an hour apart, at half past, a day ahead of the tests before.
    const start = Math.ceil(clock.now().getTime() / 3600_000) * 3600_000 + 86_400_000 + 30 * 60_000;
    clock.set(new Date(start));
    for (let hour = 0; hour < 3; hour++) {
      await enqueuePings(cloud.ctx, owner.companyId);
      await deliverDue(cloud.ctx, LOCAL);
      clock.advance(3600_000);
    }
    const [first, middle, last] = (await outbox(cloud.ctx, owner.companyId))
      .slice(-3)
      .map((event) => event.id);
    const shown = (html: string) => [first, middle, last].filter((id) => html.includes(id!));
    // The reader reads Tokyo's time (+09:00 all year): the fields are read there, not in UTC.
    await cloud.ctx.db
      .updateTable('customers')
      .set({ time_zone: 'Asia/Tokyo' })
      .where('id', '=', owner.customerId)
      .execute();
    const tokyo = (ms: number) => new Date(ms + 9 * 3600_000).toISOString().slice(0, 16);
    const made = start + 3600_000;
    // From the hour to the half hour the middle ping was made at, that minute included: the middle ping alone.
    const page = await owner.client.get(`${path()}?from=${tokyo(made - 30 * 60_000)}&until=${tokyo(made)}`);
    expect(shown(page.html)).toEqual([middle]);
    expect(visibleText(page.html)).toContain('From (Asia/Tokyo)');
    expect(page.html).toContain(`value="${tokyo(made - 30 * 60_000)}"`);
    expect(page.html).toContain(`value="${tokyo(made)}"`);
    expect(shown((await owner.client.get(`${path()}?from=${tokyo(made)}`)).html)).toEqual([middle, last]);
    expect(shown((await owner.client.get(`${path()}?until=${tokyo(made - 60_000)}`)).html)).toEqual([first]);
    // A time that is not one is dropped, as every filter that makes no sense.
    const nonsense = await owner.client.get(`${path()}?from=yesterday&until=2031-02-30T10:00`);
    expect(nonsense.status).toBe(200);
    expect(shown(nonsense.html)).toEqual([first, middle, last]);
    await cloud.ctx.db
      .updateTable('customers')
      .set({ time_zone: null })
      .where('id', '=', owner.customerId)
      .execute();
  });

  it('[attack:web.company-other-company] shows nothing of a company to a member of another', async () => {
    const stranger = await companyOwner(cloud, { name: 'Other Couriers' });
    expect((await stranger.client.get(path())).status).toBe(404);
    const someEvent = receiver.received.at(-1)!.id;
    expect((await stranger.client.get(`${path()}/${someEvent}`)).status).toBe(404);
    await stranger.client.get(`/company/${stranger.companyId}/events`);
    const foreign = await stranger.client.get(`/company/${stranger.companyId}/events/${someEvent}`);
    expect(foreign.status).toBe(404);
    expect(visibleText(foreign.html)).toContain('No such event of the company');
    expect((await stranger.client.get(`/company/${stranger.companyId}/events/not-an-id`)).status).toBe(404);
    await stranger.client.get(`/company/${stranger.companyId}/events`);
    expect((await stranger.client.post(`${path()}/test`)).status).toBe(404);
    expect((await stranger.client.post(`${path()}/retry`)).status).toBe(404);
  });
});
