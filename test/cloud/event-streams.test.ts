import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatelinkClient, type ListenedEvent, verifyWebhook } from '../../company/client/index.js';
import { EVENT_EXAMPLES, EVENT_KINDS } from '../../shared/company-api/events.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings, firstSigningSecret } from '../support/event-company.js';

/**
 * `trigger` and `listen` over real HTTP (docs/design.md section 6.1): a sample of every kind, a stream that
 * carries each event of its company as a signed delivery (verified with the published key and, once the
 * company has a signing secret, with the `standardwebhooks` package), never another company's, at most four
 * streams a company, and every stream ended when the cloud stops.
 */
let database: TestDatabase;
let cloud: TestCloud;
let serviceKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  serviceKey = (JSON.parse(published.body) as { key: string }).key;
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function company(name: string): Promise<{ orgId: number; client: GatelinkClient }> {
  const { org_id, secret } = await secretCompany(cloud, name);
  return {
    orgId: org_id,
    client: new GatelinkClient({ baseUrl: cloud.baseUrl, auth: { orgId: org_id, secret } }),
  };
}

/** A listen stream read in the background: what it received, and how to end it. */
function listening(client: GatelinkClient) {
  const stop = new AbortController();
  const received: ListenedEvent[] = [];
  const ended = (async () => {
    for await (const event of client.listen({ signal: stop.signal })) received.push(event);
  })().catch((error: unknown) => error);
  return { received, stop: () => stop.abort(), ended };
}

/** Waits until `count` streams of the company are open on the cloud, so that what follows is seen by them. */
async function streamsOpen(orgId: number, count: number): Promise<void> {
  await expect.poll(() => cloud.streams.count(orgId)).toBe(count);
}

describe('trigger', () => {
  it('writes a sample of every kind with its README example data, and refuses a kind that does not exist', async () => {
    const { orgId, client } = await company('Trigger Happy Ltd');
    for (const kind of EVENT_KINDS) {
      const answer = await client.trigger(kind);
      expect(answer.type).toBe(kind);
      const row = await cloud.ctx.db
        .selectFrom('events')
        .select(['type', 'data', 'company_id'])
        .where('id', '=', answer.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ type: kind, data: EVENT_EXAMPLES[kind].data, company_id: orgId });
    }
    const refused = await cloud.call('trigger', {
      ...(await secretCompany(cloud, 'Typo Ltd')),
      type: 'open.nothing',
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_field', field: 'type' });
  });
});

describe('listen', () => {
  it("streams each of the company's events, signed as a delivery, and none of another company's", async () => {
    const ours = await company('Listening Couriers');
    const theirs = await company('Other Couriers');
    const secret = await firstSigningSecret(cloud.ctx, ours.orgId);
    // An event from before the stream is not sent: it starts at the company's newest.
    await enqueuePings(cloud.ctx, ours.orgId);
    const stream = listening(ours.client);
    await streamsOpen(ours.orgId, 1);
    await theirs.client.trigger('ping');
    const sample = await ours.client.trigger('open.succeeded');
    await enqueuePings(cloud.ctx, ours.orgId);
    await expect.poll(() => stream.received.length).toBe(2);
    const [first, second] = stream.received;
    expect(first!.type).toBe('open.succeeded');
    expect(second!.type).toBe('ping');
    expect(BigInt(second!.seq)).toBeGreaterThan(BigInt(first!.seq));
    const event = verifyWebhook({ headers: first!.headers, body: first!.body, publicKey: serviceKey });
    expect(event).toMatchObject({ type: 'open.succeeded', id: sample.id });
    expect(new Webhook(secret).verify(first!.body, first!.headers)).toMatchObject({ id: sample.id });
    stream.stop();
    expect(await stream.ended).toBeInstanceOf(Error);
    await streamsOpen(ours.orgId, 0);
  });

  it('[attack:api.listen-flood] refuses a fifth stream of one company with 429 too_many_streams', async () => {
    const { orgId, client } = await company('Greedy Listeners');
    const streams = [1, 2, 3, 4].map(() => listening(client));
    await streamsOpen(orgId, 4);
    const fifth = listening(client);
    expect(await fifth.ended).toMatchObject({ code: 'too_many_streams', status: 429 });
    for (const stream of streams) stream.stop();
    await streamsOpen(orgId, 0);
    const again = listening(client);
    await streamsOpen(orgId, 1);
    again.stop();
  });

  it('[attack:api.listen-foreign] is refused without valid credentials, and never names another company', async () => {
    const { orgId } = await company('Guarded Couriers');
    const wrong = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: { orgId, secret: `glsk_${'A'.repeat(43)}` },
    });
    expect(await listening(wrong).ended).toMatchObject({ code: 'bad_secret', status: 401 });
    const response = await fetch(`${cloud.baseUrl}/api/company.php?a=listen`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: orgId }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'auth_required' });
  });
});

describe('a cloud that stops', () => {
  it('ends its streams rather than waiting for them', async () => {
    const own = await createTestDatabase();
    const stopping = await startTestCloud({ database: own });
    const { org_id, secret } = await secretCompany(stopping, 'Late Ltd');
    const client = new GatelinkClient({ baseUrl: stopping.baseUrl, auth: { orgId: org_id, secret } });
    const stream = listening(client);
    await expect.poll(() => stopping.streams.count(org_id)).toBe(1);
    await stopping.stop();
    await stream.ended;
    await own.close();
    expect(stream.received).toEqual([]);
  });
});
