import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { waitFor } from './wait-for.js';

/** A notification the page's service worker shows, as a test reads it. */
export interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  actions: { action: string; title: string }[];
  requireInteraction: boolean;
  data: unknown;
}

/** The notifications the page's service worker shows now. */
export function shownNotifications(page: Page): Promise<ShownNotification[]> {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    return (await registration.getNotifications()).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
      actions: (n as Notification & { actions: { action: string; title: string }[] }).actions.map(
        (action) => ({ action: action.action, title: action.title }),
      ),
      requireInteraction: n.requireInteraction,
      data: n.data as unknown,
    }));
  });
}

/** Pushes to one page's service worker through the DevTools protocol, as a push service would. */
export interface WorkerPush {
  /** Delivers `payload` once. */
  deliver(payload: unknown): Promise<void>;
  /**
   * Delivers `payload` and resolves with what the worker shows once it shows one notification. A push the
   * browser dropped (its worker slow to start on a busy machine) comes again, as a push service would send it
   * again; the same tag replaces rather than adds, so the count stays a fair check.
   */
  untilShown(payload: unknown): Promise<ShownNotification[]>;
}

/** The push channel to the service worker of `page`, on `origin`, once the worker is registered. */
export async function workerPush(context: BrowserContext, page: Page, origin: string): Promise<WorkerPush> {
  const cdp = await context.newCDPSession(page);
  const registrations: { registrationId: string; scopeURL: string }[] = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (event) => registrations.push(...event.registrations));
  await cdp.send('ServiceWorker.enable');
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  await waitFor(() => registrations.some((r) => r.scopeURL === `${origin}/`), 'the service worker');
  const registrationId = registrations.find((r) => r.scopeURL === `${origin}/`)!.registrationId;
  const deliver = async (payload: unknown) => {
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin,
      registrationId,
      data: JSON.stringify(payload),
    });
  };
  return {
    deliver,
    async untilShown(payload) {
      await deliver(payload);
      await expect
        .poll(
          async () => {
            const count = (await shownNotifications(page)).length;
            if (count === 0) await deliver(payload);
            return count;
          },
          { timeout: 30_000, interval: 2_000 },
        )
        .toBe(1);
      return shownNotifications(page);
    },
  };
}

/** Delivers `payload` to the service worker of `page` until it shows one notification (WorkerPush.untilShown). */
export async function pushToWorker(
  context: BrowserContext,
  page: Page,
  origin: string,
  payload: unknown,
): Promise<ShownNotification[]> {
  return (await workerPush(context, page, origin)).untilShown(payload);
}
