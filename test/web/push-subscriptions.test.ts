import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SUBSCRIPTIONS } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { type BrowserClient, visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TestPushService } from '../support/push-service.js';

/**
 * "Notifications on this device" on the account page (docs/design.md section 10.6): the subscription the page's
 * script posts, the list, renaming and removing, and what is refused: a body that is not a subscription, a push
 * service at a private address (production rules: no test switch), and another customer's subscription.
 */
const CHROME_ANDROID =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36';

let database: TestDatabase;
let cloud: TestCloud;
let service: TestPushService;

beforeAll(async () => {
  database = await createTestDatabase();
  // No test switch: push services must be public, as in production. Names resolve as the test says.
  cloud = await startTestCloud({
    database,
    resolveHost: async (host) =>
      host === 'push.example.net'
        ? [{ address: '142.250.74.10', family: 4 }]
        : [{ address: '10.0.0.8', family: 4 }],
  });
  service = new TestPushService();
  await service.start(cloud.ctx.vapid.publicKey);
});

afterAll(async () => {
  await service?.stop();
  await cloud?.stop();
  await database?.close();
});

/** A subscription as a browser makes it, at a push service on a public host. */
function publicSubscription(path = Math.random().toString(36).slice(2)) {
  const made = service.subscribe();
  return { ...made, endpoint: `https://push.example.net/wpush/${path}`, expirationTime: null };
}

async function accountOf(name: string): Promise<BrowserClient> {
  const { client } = await signedInCustomer(cloud, name);
  await client.get('/account');
  return client;
}

describe('turning notifications on', () => {
  it('keeps the subscription named after the browser, lists it, and says so', async () => {
    const client = await accountOf('Anna');
    const before = await client.get('/account');
    expect(visibleText(before.html)).toContain('Notifications on this device');
    expect(visibleText(before.html)).toContain('Be told on this phone when your gate is opened');
    expect(before.html).toContain(`data-vapid-key="${cloud.ctx.vapid.publicKey}"`);
    expect(before.html).toContain('src="/assets/push.js"');

    const posted = await client.postJson('/account/notifications', publicSubscription(), {
      'user-agent': CHROME_ANDROID,
    });

    expect(posted.status, posted.html).toBe(200);
    expect(JSON.parse(posted.html)).toEqual({ redirect: '/account?done=notifications-on' });
    const page = visibleText((await client.get('/account?done=notifications-on')).html);
    expect(page).toContain('Notifications are on in this browser');
    expect(page).toContain('Chrome on Android');
  });

  it('the same browser again keeps one subscription and its name, with its new keys', async () => {
    const client = await accountOf('Ben');
    const subscription = publicSubscription();
    await client.postJson('/account/notifications', subscription, { 'user-agent': CHROME_ANDROID });
    const renewed = { ...subscription, keys: service.subscribe().keys };
    expect((await client.postJson('/account/notifications', renewed)).status).toBe(200);

    const rows = await cloud.ctx.db
      .selectFrom('push_subscriptions')
      .selectAll()
      .where('endpoint', '=', subscription.endpoint)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: 'Chrome on Android',
      p256dh: renewed.keys.p256dh,
      auth: renewed.keys.auth,
    });
  });

  it('refuses a body that is not a subscription, naming what is wrong, and without the page token', async () => {
    const client = await accountOf('Cleo');
    const good = publicSubscription();
    const cases: [unknown, string][] = [
      [{ ...good, keys: { ...good.keys, p256dh: 'AAAA' } }, 'keys.p256dh'],
      [{ ...good, keys: { ...good.keys, auth: `${good.keys.auth}AAAA` } }, 'keys.auth'],
      [{ ...good, keys: { ...good.keys, auth: 'not base64url!' } }, 'keys.auth'],
      [{ ...good, endpoint: 'not a url' }, 'endpoint'],
      [{ endpoint: good.endpoint }, 'keys'],
      [[], 'subscription'],
    ];
    for (const [body, field] of cases) {
      const answer = await client.postJson('/account/notifications', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(answer.html)).toMatchObject({ error: 'push_subscription_refused', field });
    }
    const notJson = await client.postJson('/account/notifications', '{"endpoint":');
    expect(notJson.status).toBe(400);
    const http = await client.postJson('/account/notifications', {
      ...good,
      endpoint: 'http://push.example.net/x',
    });
    expect(JSON.parse(http.html)).toMatchObject({
      error: 'push_subscription_refused',
      message: 'The push service address must start with https://.',
    });
    const forged = await client.postJson('/account/notifications', good, { 'x-csrf-token': 'forged' });
    expect(forged.status).toBe(403);
    expect(
      await cloud.ctx.db
        .selectFrom('push_subscriptions')
        .select('id')
        .where('endpoint', '=', good.endpoint)
        .execute(),
    ).toEqual([]);
  });

  it('[attack:web.push-private-endpoint] refuses a push service that is, or resolves to, a private or loopback address', async () => {
    const client = await accountOf('Dan');
    const keys = service.subscribe().keys;
    for (const endpoint of [
      'https://127.0.0.1/push/1',
      'https://[::1]:8443/push/1',
      'https://192.168.1.10/push/1',
      'https://169.254.169.254/latest',
      'https://intranet.example.net/push/1',
    ]) {
      const answer = await client.postJson('/account/notifications', { endpoint, keys });
      expect(answer.status, endpoint).toBe(400);
      const body = JSON.parse(answer.html) as { error: string; field: string; message: string };
      expect(body).toMatchObject({ error: 'push_subscription_refused', field: 'endpoint' });
      expect(body.message).toMatch(/address; only public ones are used\.$/);
    }
    expect(
      await cloud.ctx.db.selectFrom('push_subscriptions').select('id').where('name', '=', 'x').execute(),
    ).toEqual([]);
  });

  it(`stops at ${MAX_SUBSCRIPTIONS} browsers per account`, async () => {
    const client = await accountOf('Eve');
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i += 1) {
      expect((await client.postJson('/account/notifications', publicSubscription())).status).toBe(200);
    }
    const over = await client.postJson('/account/notifications', publicSubscription());
    expect(over.status).toBe(409);
    expect(JSON.parse(over.html)).toMatchObject({ error: 'too_many_push_devices' });
  });
});

describe('the list', () => {
  it('renames a browser, refusing an empty or invisible name on the page, and removes one', async () => {
    const client = await accountOf('Finn');
    await client.postJson('/account/notifications', publicSubscription(), { 'user-agent': CHROME_ANDROID });
    const [row] = await ownRows('Finn');
    await client.get('/account');

    const empty = await client.post(`/account/notifications/${row!.id}/name`, { name: '  ' });
    expect(empty.status).toBe(400);
    expect(visibleText(empty.html)).toContain('Enter a name for the browser');
    const invisible = await client.post(`/account/notifications/${row!.id}/name`, { name: 'Phone\u202e' });
    expect(invisible.status).toBe(400);

    const renamed = await client.post(`/account/notifications/${row!.id}/name`, { name: "Finn's phone" });
    expect(renamed).toMatchObject({ status: 303, location: '/account?done=notification-renamed' });
    expect(visibleText((await client.get('/account')).html)).toContain("Finn's phone");

    const removed = await client.post(`/account/notifications/${row!.id}/remove`);
    expect(removed).toMatchObject({ status: 303, location: '/account?done=notification-removed' });
    expect(await ownRows('Finn')).toEqual([]);
  });

  it("[attack:web.push-foreign-subscription] another customer's browser cannot be renamed or removed (404), nor its endpoint taken", async () => {
    const owner = await accountOf('Gus');
    const subscription = publicSubscription();
    await owner.postJson('/account/notifications', subscription, { 'user-agent': CHROME_ANDROID });
    const [theirs] = await ownRows('Gus');
    const intruder = await accountOf('Hal');

    const rename = await intruder.post(`/account/notifications/${theirs!.id}/name`, { name: 'Mine now' });
    const remove = await intruder.post(`/account/notifications/${theirs!.id}/remove`);
    const take = await intruder.postJson('/account/notifications', {
      ...subscription,
      keys: service.subscribe().keys,
    });

    expect(rename.status).toBe(404);
    expect(remove.status).toBe(404);
    expect(take.status).toBe(400);
    expect(JSON.parse(take.html)).toMatchObject({ error: 'push_subscription_refused' });
    const [after] = await ownRows('Gus');
    expect(after).toMatchObject({
      id: theirs!.id,
      name: 'Chrome on Android',
      p256dh: subscription.keys.p256dh,
      auth: subscription.keys.auth,
    });
    expect(await ownRows('Hal')).toEqual([]);
  });
});

async function ownRows(name: string) {
  return cloud.ctx.db
    .selectFrom('push_subscriptions')
    .innerJoin('customers', 'customers.id', 'push_subscriptions.customer_id')
    .selectAll('push_subscriptions')
    .where('customers.display_name', '=', name)
    .execute();
}
