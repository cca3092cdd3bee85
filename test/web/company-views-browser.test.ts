import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import type { ResolvedAddress } from '../../cloud/links/outbound-http/safe-connection.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { insertEntries, journalBarrier } from '../support/barrier-journal.js';
import {
  BROWSER_STORY_TIMEOUT_MS,
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The callback endpoints, events, requests and openings pages in real Chromium at a phone's and a desktop's size
 * (docs/design.md sections 6.2 and 11.4): each view passes axe, reaches no other host and leaves a screenshot
 * under test/artifacts/.
 */
const resolveHost = async (): Promise<ResolvedAddress[]> => [{ address: '93.184.215.14', family: 4 }];

describe.skipIf(chromiumMissing)(
  'callback, requests and openings in Chromium',
  { timeout: BROWSER_STORY_TIMEOUT_MS },
  () => {
    let database: TestDatabase;
    let cloud: TestCloud;
    let browser: Browser;

    beforeAll(async () => {
      database = await createTestDatabase();
      cloud = await startTestCloud({ database, resolveHost });
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await cloud?.stop();
      await database?.close();
    });

    async function look(page: Page, title: string, name: string, viewport: ViewportName): Promise<void> {
      await expect.poll(() => page.title()).toContain(title);
      expect(await seriousAccessibilityViolations(page), name).toEqual([]);
      await screenshot(page, name, viewport);
    }

    /**
     * An attempt as the delivery worker logs a refused one, on the company's oldest event (the address here is
     * not reachable, so the page is given what a receiver would have answered); returns the event's id.
     */
    async function refusedAttempt(companyId: number): Promise<string> {
      const event = await cloud.ctx.db
        .selectFrom('events')
        .select(['id', 'type'])
        .where('company_id', '=', companyId)
        .orderBy('seq')
        .executeTakeFirstOrThrow();
      const endpoint = await cloud.ctx.db
        .selectFrom('endpoints')
        .select('id')
        .where('company_id', '=', companyId)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const body = JSON.stringify({ error: 'signature did not verify', request_id: 'req-7f3a' }, null, 2);
      await cloud.ctx.db
        .insertInto('event_deliveries')
        .values({
          company_id: companyId,
          endpoint_id: endpoint.id,
          event_id: event.id,
          type: event.type,
          attempt: 1,
          at: cloud.ctx.clock.now(),
          url: 'https://hooks.example.com/gatelink',
          outcome: 'retry',
          status: 400,
          error: 'answered 400; only a 2xx status is a delivery',
          duration_ms: 84,
          next_attempt_at: new Date(cloud.ctx.clock.now().getTime() + 30_000),
          sent_headers: JSON.stringify({
            'webhook-id': event.id,
            'webhook-timestamp': '1795000000',
            'webhook-signature': `v1,${'A'.repeat(43)}= v1a,${'B'.repeat(86)}==`,
            'Content-Type': 'application/json',
            'User-Agent': 'Gatelink-Webhooks/1',
          }),
          answer: JSON.stringify({
            headers: [
              ['content-type', 'application/json'],
              ['x-request-id', 'req-7f3a'],
            ],
            body,
            cut: false,
          }),
        })
        .execute();
      return event.id;
    }

    async function signIn(context: BrowserContext, customerId: number): Promise<void> {
      const value = await startSession(cloud.ctx, customerId);
      await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
    }

    /** A company with requests in every state and openings on a customer's barrier. */
    async function busyCompany(viewport: ViewportName) {
      const owner = await companyOwner(cloud, { name: `Night & Day Couriers (${viewport})` });
      await approveDirectly(cloud, owner.companyId);
      const auth = {
        org_id: owner.companyId,
        secret: (await issueSecret(cloud.ctx, owner.companyId)).secret,
      };
      const customer = await signedInCustomer(cloud, 'Dana');
      const barrier = await journalBarrier(cloud.ctx, customer.id, "Mum's house");
      const codes: string[] = [];
      for (const ref of ['ORD-1001', 'ORD-1002', 'ORD-1003']) {
        codes.push((await cloud.call('request', { ...auth, ref })).body.code as string);
      }
      await claimRequest(cloud.ctx, { code: codes[1]!, customerId: customer.id });
      await claimRequest(cloud.ctx, { code: codes[2]!, customerId: customer.id });
      const { keyRef } = await issueAccessKey(cloud.ctx, {
        code: codes[2]!,
        customerId: customer.id,
        deviceId: barrier.deviceId,
        objectIds: barrier.objects.map((object) => object.id),
        keyExpiresAt: null,
      });
      const holder = { companyId: owner.companyId, name: 'Night & Day', keyRef };
      await insertEntries(cloud.ctx, barrier, [
        { holder, actor: 'Anna, shift 2' },
        { holder, actor: 'Bob (van 4)', outcome: 'rate_limit' },
        { holder, actor: 'Anna, shift 2', outcome: 'device_error', detail: 'relay_fault', object: 1 },
      ]);
      return owner;
    }

    for (const viewport of ['phone', 'desktop'] as const) {
      it(`at ${viewport} size: adds callback endpoints, lists requests and openings with filters`, async () => {
        const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
        const owner = await busyCompany(viewport);
        await signIn(context, owner.customerId);
        const base = `/company/${owner.companyId}`;

        await page.goto(`${base}/callback`);
        await look(page, 'Callback endpoints', 'callback-empty', viewport);
        await page.getByLabel('Callback address').fill('http://hooks.example.com/gatelink');
        await page.getByRole('button', { name: 'Add the endpoint' }).click();
        await page.getByText('There is a problem').waitFor();
        await look(page, 'Callback endpoints', 'callback-refused', viewport);
        // The claims and the grant above are events kept while there was no endpoint: the first one asks.
        await page.getByLabel('Callback address').fill('https://hooks.example.com/gatelink');
        await page.getByLabel('Send them to this address too, oldest first').check();
        await page.getByRole('button', { name: 'Add the endpoint' }).click();
        await page.getByText('Endpoint added. The events that were waiting go to it first').waitFor();
        await look(page, 'Callback endpoint', 'endpoint-added', viewport);
        // The endpoint brings its signing secret, shown this once, with a Copy button from our script.
        const secret = await page.getByRole('textbox', { name: 'Signing secret', exact: true }).inputValue();
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cloud.baseUrl });
        await page.getByRole('button', { name: 'Copy' }).click();
        await page.getByRole('button', { name: 'Copied' }).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
        // Rotating asks first, then shows the new one and lists the old one as retiring.
        page.once('dialog', (dialog) => void dialog.accept());
        await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
        await page.getByText('Retiring').waitFor();
        const rotated = await page.getByRole('textbox', { name: 'Signing secret', exact: true }).inputValue();
        expect(rotated).not.toBe(secret);
        await look(page, 'Callback endpoint', 'endpoint-secret-rotated', viewport);
        // The kinds it takes: none ticked is refused, two are kept; the grant's event waiting is passed over.
        await page.getByLabel('Only the kinds ticked below').check();
        for (const box of await page.locator('.kinds input[type="checkbox"]').all()) await box.uncheck();
        await page.getByRole('button', { name: 'Save the kinds' }).click();
        await page.getByText('Tick at least one kind, or choose every kind.').first().waitFor();
        await look(page, 'Callback endpoint', 'endpoint-kinds-refused', viewport);
        expect(await page.getByLabel('Only the kinds ticked below').isChecked()).toBe(true);
        await page.getByLabel(/^open\.succeeded:/).check();
        await page.getByLabel(/^open\.failed:/).check();
        await page.getByRole('button', { name: 'Save the kinds' }).click();
        await page
          .getByText(/The kinds are saved\. \d+ events waiting were of a kind this endpoint no longer takes/)
          .waitFor();
        await look(page, 'Callback endpoint', 'endpoint-kinds', viewport);
        // A second endpoint beside it, for the ERP: no question about the events waiting this time.
        await page.getByRole('link', { name: 'All endpoints' }).click();
        expect(await page.locator('input[name="held"]').count()).toBe(0);
        await page
          .getByLabel('Callback address')
          .fill('https://erp.example.com/webhooks/gatelink/deliveries');
        await page.getByRole('button', { name: 'Add the endpoint' }).click();
        await page.getByText('Endpoint added.').waitFor();
        // It has been failing for a while, as an ERP that is down would (the addresses here reach nothing).
        const erp = await cloud.ctx.db
          .updateTable('endpoints')
          .set({
            failing_since: new Date(cloud.ctx.clock.now().getTime() - 3600_000),
            failing_url: 'https://erp.example.com/webhooks/gatelink/deliveries',
            last_error: 'could not connect: ECONNREFUSED',
          })
          .where('company_id', '=', owner.companyId)
          .where('url', '=', 'https://erp.example.com/webhooks/gatelink/deliveries')
          .returning('id')
          .executeTakeFirstOrThrow();
        await page.getByRole('link', { name: 'All endpoints' }).click();
        await page.getByText('2 endpoints').waitFor();
        await look(page, 'Callback endpoints', 'callback-list', viewport);
        const list = await page.locator('main').innerText();
        expect(list).toContain('Working');
        expect(list).toMatch(/Failing since \d+ \w{3} \d{4}, \d{2}:\d{2}:\d{2} UTC/);
        expect(list).toContain('2 of 14 kinds');
        expect(list).toContain('Every kind · Nothing waiting');
        const issued = await cloud.ctx.db
          .selectFrom('events')
          .select('id')
          .where('company_id', '=', owner.companyId)
          .where('type', '=', 'request.issued')
          .executeTakeFirstOrThrow();
        await page.goto(`${base}/events/${issued.id}`);
        await page.getByText('Not sent: this endpoint does not take request.issued events').first().waitFor();
        await look(page, 'Event', 'event-not-sent', viewport);
        await page
          .getByRole('button', { name: 'Send it anyway: https://hooks.example.com/gatelink' })
          .click();
        await page.getByText('On its way').waitFor();
        // The Events page: each endpoint's state, its own Retry now, and the log's filters, chosen and shown.
        await page.getByRole('link', { name: 'Events', exact: true }).click();
        await page
          .getByText('It takes 2 kinds of event: open.succeeded, open.failed, and test events.')
          .waitFor();
        await page
          .getByRole('button', { name: 'Retry now: https://erp.example.com/webhooks/gatelink/deliveries' })
          .waitFor();
        await look(page, 'Events', 'events-endpoints', viewport);
        await page.getByLabel('Endpoint', { exact: true }).selectOption(String(erp.id));
        await page.getByLabel('Kind').selectOption('open.succeeded');
        await page.getByRole('button', { name: 'Show' }).click();
        await page.getByText('No attempts match these filters.').waitFor();
        expect(page.url()).toContain(`endpoint=${erp.id}`);
        expect(page.url()).toContain('kind=open.succeeded');
        await look(page, 'Events', 'events-filtered', viewport);
        // An event's page: its body, and an attempt that a receiver refused, with what it answered.
        const refused = await refusedAttempt(owner.companyId);
        await page.goto(`${base}/events/${refused}`);
        await look(page, 'Event', 'event-attempts', viewport);
        await expect.poll(() => page.getByText('"error": "signature did not verify"').isVisible()).toBe(true);
        await page.getByText(/Attempt 1 · Failed, will retry · HTTP 400/).click();
        await expect.poll(() => page.getByText('x-request-id').isVisible()).toBe(false);

        await page.getByRole('link', { name: 'Requests' }).click();
        await look(page, 'Requests', 'requests-all', viewport);
        await page.getByLabel('State').selectOption('claimed');
        await page.getByRole('button', { name: 'Show' }).click();
        await page.getByText('Latest requests').waitFor();
        expect(page.url()).toContain('state=claimed');
        await look(page, 'Requests', 'requests-claimed', viewport);

        await page.getByRole('link', { name: 'Openings' }).click();
        await look(page, 'Openings', 'openings-all', viewport);
        await page.getByLabel('Employee (actor) contains').fill('Anna');
        await page.getByRole('button', { name: 'Show' }).click();
        await page.waitForURL(/actor=Anna/);
        await look(page, 'Openings', 'openings-anna', viewport);
        expect(await page.locator('.entry').count()).toBe(2);

        // What the members did above, the newest first: the event sent anyway, the kinds chosen, the secret.
        await page.getByRole('link', { name: 'Activity' }).click();
        await look(page, 'Activity', 'activity', viewport);
        await expect
          .poll(() => page.locator('#member-actions-heading + ul li').first().innerText())
          .toContain('sent an event again');
        const actions = await page.locator('#member-actions-heading + ul').innerText();
        expect(actions).toContain('chose the kinds of event the callback takes: open.succeeded, open.failed');
        expect(actions).toContain('made a signing secret');

        // A viewer of the same company reads the same page, told so, with no form to send.
        const vic = await signedInCustomer(cloud, `Vic (${viewport})`);
        await cloud.ctx.db
          .insertInto('company_members')
          .values({
            company_id: owner.companyId,
            customer_id: vic.id,
            email: null,
            role: 'viewer',
            added_at: cloud.ctx.clock.now(),
            added_by: owner.customerId,
          })
          .execute();
        await context.clearCookies();
        await signIn(context, vic.id);
        await page.goto(`${base}/callback`);
        await look(page, 'Callback endpoints', 'callback-viewer', viewport);
        expect(await page.getByText('You are a viewer').count()).toBe(1);
        expect(await page.locator('main').innerText()).toContain('https://hooks.example.com/gatelink');
        expect(await page.getByRole('heading', { name: 'Add an endpoint' }).count()).toBe(0);
        await page.getByRole('link', { name: 'Manage https://hooks.example.com/gatelink' }).click();
        await look(page, 'Callback endpoint', 'endpoint-viewer', viewport);
        expect(await page.locator('#kinds').innerText()).toContain(
          'Only these kinds of event, and test events:',
        );
        expect(await page.locator('form[method="post"]:not([action="/signout"])').count()).toBe(0);

        expect(foreignRequests).toEqual([]);
        await context.close();
      });
    }
  },
);
