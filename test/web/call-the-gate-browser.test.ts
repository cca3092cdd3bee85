import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { questionFacts, questionPush } from '../../cloud/rules/notices/question-notice.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier, type TestBarrier } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openQuestion } from '../support/open-question.js';
import { TestPushService } from '../support/push-service.js';
import { pushToWorker } from '../support/worker-push.js';

/**
 * "Call the gate" in Chromium (docs/design.md section 10.9): the service worker shows a pushed request to call,
 * which stays, and whose one action opens the question's page (not an answer given from the notification, as
 * Allow is: only a tap on the page can dial); there, at phone and desk widths and checked with
 * axe, a press on Call the gate records the tap and is answered with a 303 to `tel:` that the page's
 * Content-Security-Policy lets through, and the waiting `open` answers as opened.
 */
const GATE_NUMBER = '+491701234567';

describe.skipIf(chromiumMissing)('call the gate, in Chromium', () => {
  let database: TestDatabase;
  let cloud: TestCloud;
  let pushService: TestPushService;
  let browser: Browser;
  let customerId: number;
  let token: string;
  let barrier: TestBarrier;
  let open: () => Promise<Answer>;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
    pushService = new TestPushService();
    await pushService.start(cloud.ctx.vapid.publicKey);
    browser = await launchChromium();
    customerId = (await createCustomer(cloud.ctx, { displayName: 'Olga Phone' })).id;
    token = await startSession(cloud.ctx, customerId);
    // A gate its owner's phone calls, as the phone reported it, and the phone offline.
    barrier = await insertBarrier(cloud, customerId, { name: 'Mill Lane', labels: ['Gate'], online: false });
    const numberId = barrier.objects[0]!.number_id;
    await cloud.ctx.db
      .updateTable('device_objects')
      .set({ kind: 'phone', gate_number: GATE_NUMBER })
      .where('id', '=', numberId)
      .execute();
    await subscribe(cloud.ctx, {
      customerId,
      subscription: pushService.subscribe(),
      userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile',
    });
    const company = await secretCompany(cloud, 'Demo Cleaning Ltd');
    const code = (await cloud.call('request', company)).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: barrier.deviceId,
      objectIds: [numberId],
      keyExpiresAt: null,
    });
    open = () =>
      cloud.call('open', { ...company, key_ref: keyRef, number_id: numberId, actor: 'Anna, shift 2' });
  });

  afterAll(async () => {
    await browser?.close();
    await pushService?.stop();
    await cloud?.stop();
    await database?.close();
  });

  async function signedIn(size: 'phone' | 'desktop'): Promise<{ context: BrowserContext; page: Page }> {
    const profile = await newProfile(browser, cloud.baseUrl, size);
    await profile.context.addCookies([{ name: 'gatelink-session', value: token, url: cloud.baseUrl }]);
    await profile.context.grantPermissions(['notifications'], { origin: cloud.baseUrl });
    return profile;
  }

  const asked = () => openQuestion(cloud, { kind: 'call' }, 'the request to call');

  it('shows the pushed request to call until answered, leading to the question page', async () => {
    const { context, page } = await signedIn('phone');
    const opening = open();
    const entry = await asked();
    await page.goto(`/barriers/${barrier.deviceId}`);
    const facts = (await questionFacts(cloud.ctx.db, [entry])).get(entry)!;
    const payload = questionPush(facts, { baseUrl: cloud.baseUrl, zone: 'UTC' });
    const [notification] = await pushToWorker(context, page, cloud.baseUrl, payload);
    expect(notification).toMatchObject({
      title: 'Mill Lane: Demo Cleaning Ltd asks to open',
      tag: `question-${entry}`,
      requireInteraction: true,
      actions: [{ action: 'call', title: 'Call the gate…' }],
    });
    expect(notification!.body).toMatch(
      /Your phone that calls the gate is offline: tap, then Call the gate by/,
    );

    // Its action, and a tap anywhere on it, open the question's page, where the call is placed.
    const target = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.ready;
      const [shownNow] = await registration.getNotifications();
      return (shownNow?.data as { url?: string; question?: boolean } | undefined) ?? null;
    });
    expect(target).toEqual({ url: `${cloud.baseUrl}/barriers/${barrier.deviceId}/questions/${entry}` });
    await context.close();
    await cloud.ctx.db
      .updateTable('opening_questions')
      .set({ answer: 'unanswered', answered_at: cloud.ctx.clock.now() })
      .where('journal_id', '=', entry)
      .execute();
    expect((await opening).body.error).toBe('device_offline');
  }, 90_000);

  it('dials through a 303 to tel: that the page lets through, at 360 px and at a desk, and passes axe', async () => {
    for (const size of ['phone', 'desktop'] as const) {
      const opening = open();
      const entry = await asked();
      const { context, page } = await signedIn(size);
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
      });
      await page.goto(`/barriers/${barrier.deviceId}`);
      await page.getByRole('heading', { name: 'Waiting for your answer' }).waitFor();
      await screenshot(page, 'call-the-gate-barrier', size);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await page.locator(`a[href$="/questions/${entry}"]`).click();
      await page.getByRole('heading', { name: 'Demo Cleaning Ltd asks to open Mill Lane' }).waitFor();
      await page.getByText(`${GATE_NUMBER} is the gate's`).waitFor();
      await screenshot(page, 'call-the-gate-question', size);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);

      const answered = page.waitForResponse((response) => response.request().method() === 'POST');
      await page.getByRole('button', { name: 'Call the gate' }).click();
      const response = await answered;
      expect(response.status()).toBe(303);
      expect(response.headers().location).toBe(`tel:${GATE_NUMBER}`);
      const settled = await opening;
      expect(settled.status).toBe(200);
      expect(settled.body).toEqual({ ok: 1, id: entry });

      await page.goto(`/barriers/${barrier.deviceId}/questions/${entry}`);
      await page.getByText('Olga Phone tapped Call the gate at').waitFor();
      await page.getByRole('link', { name: 'Call the gate again' }).waitFor();
      await screenshot(page, 'call-the-gate-tapped', size);
      await page.goto(`/barriers/${barrier.deviceId}/journal`);
      await page.getByText('Called the gate from your phone').first().waitFor();
      await screenshot(page, 'call-the-gate-journal', size);
      expect(refused).toEqual([]);
      await context.close();
    }
  }, 120_000);
});
