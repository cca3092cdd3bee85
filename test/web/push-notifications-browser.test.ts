import type { Browser, BrowserContext, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';
import { shownNotifications, workerPush } from '../support/worker-push.js';

/**
 * Notifications on this device in Chromium (docs/design.md section 10.6): the account page's button asks for
 * the permission only when pressed, subscribes with the cloud's VAPID key and posts the subscription; the
 * service worker shows a pushed opening (delivered through the DevTools protocol, as a push service would) and
 * a tap on it opens the barrier's journal.
 *
 * Headless Chromium has no push service: `pushManager.subscribe` fails there with "Registration failed -
 * permission denied" even with the permission granted. So the button is tried as it is up to that call, and
 * then with `subscribe` answering a subscription of the test's push service, as a browser with one would.
 */
/** What the test reaches of the service worker's scope, which the DOM library this project compiles with does not type. */
interface WorkerScope {
  opened: string[];
  registration: ServiceWorkerRegistration;
  dispatchEvent(event: Event): boolean;
}
declare const Clients: { prototype: { openWindow(url: string | URL): Promise<unknown> } };
declare const NotificationEvent: new (type: string, init: { notification: Notification }) => Event;

describe.skipIf(chromiumMissing)('notifications in Chromium', { timeout: BROWSER_STORY_TIMEOUT_MS }, () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let service: TestPushService;
  let customerId: number;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    // The push service of this test is on loopback, which the test switch lets through.
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
    service = new TestPushService();
    await service.start(cloud.ctx.vapid.publicKey);
    browser = await launchChromium();
    customerId = (await createCustomer(cloud.ctx, { displayName: 'Nora Notified' })).id;
    token = await startSession(cloud.ctx, customerId);
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await cloud?.stop();
    await database?.close();
  });

  async function signedIn(options: { grant: boolean }) {
    const profile = await newProfile(browser, cloud.baseUrl, 'phone');
    await profile.context.addCookies([{ name: 'gatelink-session', value: token, url: cloud.baseUrl }]);
    if (options.grant) await profile.context.grantPermissions(['notifications'], { origin: cloud.baseUrl });
    const errors: string[] = [];
    profile.page.on('pageerror', (error) => errors.push(error.message));
    return { ...profile, errors };
  }

  /** Stands in for the push service this headless browser lacks: `subscribe` answers `made`, and says with what key. */
  async function browserWithPushService(context: BrowserContext, made: BrowserSubscription): Promise<void> {
    await context.addInitScript((subscription) => {
      const keyOf = (key: BufferSource) => btoa(String.fromCharCode(...new Uint8Array(key as ArrayBuffer)));
      const fake = {
        endpoint: subscription.endpoint,
        toJSON: () => ({ ...subscription, expirationTime: null }),
      };
      PushManager.prototype.getSubscription = async () => null;
      PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
        sessionStorage.setItem('subscribedWith', keyOf(options!.applicationServerKey as BufferSource));
        return fake as unknown as PushSubscription;
      };
    }, made);
  }

  it('the button asks for the permission only when pressed, and says so when this browser cannot subscribe', async () => {
    const { page, errors } = await signedIn({ grant: true });
    await page.goto('/account');
    const card = page.locator('[data-push-card]');
    await expect.poll(() => card.locator('button[data-push-subscribe]').isVisible()).toBe(true);
    expect(await card.locator('[data-push-unsupported]').isVisible()).toBe(false);
    expect(await card.locator('h2').textContent()).toBe('Notifications on this device');

    await card.getByRole('button', { name: 'Turn on notifications' }).click();

    // Here, with no push service behind it, the browser refuses the subscription and the card says so.
    await expect
      .poll(() => page.locator('#push-status').textContent())
      .toBe('This browser could not subscribe to notifications just now. Try again later.');
    expect(await cloud.ctx.db.selectFrom('push_subscriptions').select('id').execute()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('subscribes with the VAPID key and lists the browser, named after it', async () => {
    const { context, page, foreignRequests, errors } = await signedIn({ grant: true });
    const made = service.subscribe();
    await browserWithPushService(context, made);
    await page.goto('/account');

    await page.getByRole('button', { name: 'Turn on notifications' }).click();
    await page.waitForURL('**/account?done=notifications-on');

    const usedKey = await page.evaluate(() => sessionStorage.getItem('subscribedWith'));
    expect(Buffer.from(usedKey ?? '', 'base64').toString('base64url')).toBe(cloud.ctx.vapid.publicKey);
    expect(await page.locator('[role=status].notice').textContent()).toContain(
      'Notifications are on in this browser',
    );
    expect(await page.locator('[data-push-card] li .passkey-name').allTextContents()).toEqual([
      'Chrome on Linux',
    ]);
    const [row] = await cloud.ctx.db.selectFrom('push_subscriptions').selectAll().execute();
    expect(row).toMatchObject({
      customer_id: customerId,
      endpoint: made.endpoint,
      p256dh: made.keys.p256dh,
      auth: made.keys.auth,
    });
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'account-notifications', 'phone');
    expect(foreignRequests).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('with notifications blocked for the site, the card says so instead of offering the button', async () => {
    const { context, page } = await signedIn({ grant: false });
    // As a browser whose owner blocked the site's notifications in its settings.
    await context.addInitScript(() => {
      Object.defineProperty(Notification, 'permission', { get: () => 'denied' });
    });
    await page.goto('/account');
    await expect.poll(() => page.locator('[data-push-blocked]').isVisible()).toBe(true);
    expect(await page.locator('button[data-push-subscribe]').isVisible()).toBe(false);
  });

  it('without script, the card says the browser cannot and offers no button', async () => {
    const context = await browser.newContext({ baseURL: cloud.baseUrl, javaScriptEnabled: false });
    await context.addCookies([{ name: 'gatelink-session', value: token, url: cloud.baseUrl }]);
    const page = await context.newPage();
    await page.goto('/account');
    expect(await page.locator('button[data-push-subscribe]').isVisible()).toBe(false);
    expect(await page.locator('[data-push-card]').textContent()).toContain(
      'This browser cannot turn notifications on while JavaScript is off.',
    );
    await context.close();
  });

  it('the service worker shows a pushed opening, and a tap opens its journal on this origin only', async () => {
    const { context, page } = await signedIn({ grant: true });
    await page.goto('/account');
    const push = await workerPush(context, page, cloud.baseUrl);
    const journal = `${cloud.baseUrl}/barriers/DEMO1/journal`;
    const opening = {
      kind: 'opening',
      entry: 41,
      barrier: 'Front gate',
      company: 'Demo Cleaning Ltd',
      company_domain: 'demo-cleaning.example',
      actor: 'Anna, shift 2',
      outcome: 'Opened',
      outcome_code: 'opened',
      at: '2026-11-27T14:02:00.000Z',
      url: journal,
    };

    const [notification] = await push.untilShown(opening);
    expect(notification).toMatchObject({
      title: 'Front gate: Opened',
      tag: 'journal-41',
      data: { url: journal },
    });
    expect(notification!.body).toMatch(
      /^Anna, shift 2 of Demo Cleaning Ltd \(demo-cleaning\.example\) at \d\d:\d\d/,
    );

    // The same entry again replaces the notification rather than adding one.
    await push.deliver(opening);
    await expect.poll(async () => (await shownNotifications(page)).length).toBe(1);

    // A tap is the system's to dispatch: headless Chromium has no notification to tap, and a synthetic event
    // may not open a window. So the worker's `openWindow` is watched, and the event dispatched to it.
    const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
    await worker.evaluate(() => {
      const scope = self as unknown as WorkerScope;
      scope.opened = [];
      Clients.prototype.openWindow = async (url: string | URL) => {
        scope.opened.push(String(url));
        return null;
      };
    });
    expect(await tap(worker, 'journal-41')).toEqual([journal]);

    await push.deliver({ ...opening, entry: 42, url: 'https://elsewhere.example/barriers/DEMO1/journal' });
    await expect.poll(async () => (await shownNotifications(page)).map((n) => n.tag)).toContain('journal-42');
    expect(await tap(worker, 'journal-42')).toEqual([]);
  });

  /** The notification tagged `tag` tapped, as the system dispatches a tap to the worker; what it opened. */
  async function tap(worker: Worker, tag: string): Promise<string[]> {
    return worker.evaluate(async (wanted) => {
      const scope = self as unknown as WorkerScope;
      scope.opened = [];
      const notification = (await scope.registration.getNotifications()).find(
        (n: Notification) => n.tag === wanted,
      )!;
      try {
        scope.dispatchEvent(new NotificationEvent('notificationclick', { notification }));
      } catch {
        // An event not from the system may not extend its lifetime; what it started still runs.
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      return scope.opened;
    }, tag);
  }
});
