import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { issueSandboxSecret } from '../../cloud/rules/call-auth/secret.js';
import { changeCompany } from '../../cloud/rules/company-changes/company-changes.js';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { verifyWebhook } from '../../company/client/index.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runProgram } from '../support/program-run.js';
import { standardVerifier } from '../support/standard-webhooks.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The sandbox's own endpoints and events (docs/design.md sections 6.2 and 11.9), and its moves in the members'
 * record (section 11.8): the company area's callback and events pages serve the sandbox under
 * `/company/<id>/sandbox/`, apart from the live ones; a sandbox delivery is marked and verifies with its
 * endpoint's signing secret (`standardwebhooks`, v1) and the service's key (v1a); every move a member makes
 * there is in the company's record, marked. Deliveries go to a receiver on loopback, with a fake clock.
 */
const SECRET = /whsec_[A-Za-z0-9+/]{43}=/g;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let serviceKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' } });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  serviceKey = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(serviceKey);
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

const standardVerify = standardVerifier(clock);

/** The lines of the members' record, newest first, as the activity page lists them. */
async function activity(owner: CompanyOwner): Promise<string[]> {
  const page = await owner.client.get(`/company/${owner.companyId}/activity`);
  const card =
    /<section[^>]*aria-labelledby="member-actions-heading"[\s\S]*?<\/section>/.exec(page.html)?.[0] ?? '';
  return [...card.matchAll(/<li[^>]*>([\s\S]*?)<\/li>/g)].map((match) => visibleText(match[1]!));
}

describe('the sandbox’s callback and events', () => {
  it('wait for the sandbox: before its first call, and once the company is suspended, their pages lead to the sandbox page', async () => {
    const owner = await companyOwner(cloud, { name: 'Early Couriers' });
    const ledAway = async () => {
      for (const page of ['callback', 'events']) {
        const answer = await owner.client.get(`/company/${owner.companyId}/sandbox/${page}`);
        expect(answer.status, page).toBe(303);
        expect(answer.location, page).toBe(`/company/${owner.companyId}/sandbox`);
      }
    };
    await ledAway();
    const { secret } = await issueSandboxSecret(cloud.ctx, owner.companyId);
    await cloud.call('request', { org_id: owner.companyId, secret, sandbox: true });
    expect((await owner.client.get(`/company/${owner.companyId}/sandbox/callback`)).status).toBe(200);
    await changeCompany(cloud.ctx, owner.companyId, ({ db }) =>
      db.updateTable('companies').set({ status: 'suspended' }).where('id', '=', owner.companyId).execute(),
    );
    await ledAway();
  });

  it('deliver the sandbox’s events, marked and signed with its own secret, to its own address; the live side stays apart', async () => {
    const owner = await companyOwner(cloud, { name: 'Trying Couriers', email: 'tia@example.com' });
    const base = `/company/${owner.companyId}`;
    const { secret: apiSecret } = await issueSandboxSecret(cloud.ctx, owner.companyId);
    const auth = { org_id: owner.companyId, secret: apiSecret, sandbox: true };
    const code = (await cloud.call('request', { ...auth, ref: 'TRY-9' })).body.code as string;

    const sandboxPage = visibleText((await owner.client.get(`${base}/sandbox`)).html);
    expect(sandboxPage).toContain('Add a callback endpoint for the sandbox');
    const form = visibleText((await owner.client.get(`${base}/sandbox/callback`)).html);
    expect(form).toContain('Sandbox callback endpoints');
    expect(form).toContain(
      'Your sandbox\'s events go to these endpoints, apart from your live ones, each marked "sandbox": true',
    );
    const saved = await owner.client.post(`${base}/sandbox/callback`, { callback_url: receiver.url });
    expect(saved.status).toBe(200);
    const shown = saved.html.match(SECRET) ?? [];
    expect(shown).toHaveLength(1);
    const signingSecret = shown[0]!;
    expect(visibleText(saved.html)).toContain('Sandbox callback endpoint');
    const list = await owner.client.get(`${base}/sandbox/callback`);
    expect(list.html).not.toMatch(SECRET);
    expect(visibleText(list.html)).toContain(`1 endpoint ${receiver.url} Working`);
    // The sandbox page lists where its events go.
    expect(visibleText((await owner.client.get(`${base}/sandbox`)).html)).toContain(
      `and go to its endpoint: ${receiver.url} Sandbox callback endpoints`,
    );
    // The live side has no endpoint and no signing secret of its own from this.
    const live = visibleText((await owner.client.get(`${base}/callback`)).html);
    expect(live).not.toContain(receiver.url);
    expect(live).toContain('No endpoint yet');

    const granted = await owner.client.post(`${base}/sandbox/grant`, { code });
    expect(granted.status).toBe(303);
    expect(await deliverDue(cloud.ctx, { allowPrivateAddresses: true })).toEqual({ delivered: 2, failed: 0 });
    expect(receiver.received.map((got) => got.event.type)).toEqual(['request.claimed', 'request.issued']);
    for (const got of receiver.received) {
      expect(JSON.parse(got.body)).toMatchObject({ sandbox: true });
      expect(standardVerify(signingSecret, got)).toMatchObject({ type: got.event.type, sandbox: true });
      expect(got.verified).toBe(true);
      const event = verifyWebhook({
        headers: got.headers,
        body: got.body,
        publicKey: serviceKey,
        now: clock.now(),
      });
      expect(event.id).toBe(got.id);
    }
    const issuedId = receiver.received[1]!.id;

    // The sandbox's events page logs both deliveries; the live one has no address and nothing in its log.
    const events = visibleText((await owner.client.get(`${base}/sandbox/events`)).html);
    expect(events).toContain('Sandbox events');
    expect(events).toContain(receiver.url);
    expect(events).toContain('request.issued');
    const liveEvents = visibleText((await owner.client.get(`${base}/events`)).html);
    expect(liveEvents).toContain('No endpoint Nothing is sent.');
    expect(liveEvents).toContain('No attempts yet.');
    const one = await owner.client.get(`${base}/sandbox/events/${issuedId}`);
    expect(one.status).toBe(200);
    expect(visibleText(one.html)).toContain('Sandbox event request.issued');
    // The live side does not know the sandbox's event.
    expect((await owner.client.get(`${base}/events/${issuedId}`)).status).toBe(404);

    // Sent again from the sandbox's page, it comes with the same webhook-id, marked as before.
    receiver.received.length = 0;
    const endpoint = /name="endpoint" value="(\d+)"/.exec(one.html)![1]!;
    const resent = await owner.client.post(`${base}/sandbox/events/${issuedId}/resend`, { endpoint });
    expect(resent.location).toBe(`${base}/sandbox/events/${issuedId}?done=resent`);
    expect(await deliverDue(cloud.ctx, { allowPrivateAddresses: true })).toEqual({ delivered: 1, failed: 0 });
    expect(receiver.received[0]).toMatchObject({ id: issuedId });
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ sandbox: true });
    receiver.received.length = 0;

    const record = (await activity(owner)).join('\n');
    expect(record).toContain(
      `In the sandbox, Owner <tia@example.com> added the callback address ${receiver.url}`,
    );
    expect(record).toMatch(
      new RegExp(`In the sandbox, Owner <tia@example.com> granted the request ${code} \\(key \\d+\\)`),
    );
    expect(record).toContain(
      `In the sandbox, Owner <tia@example.com> sent an event again ${issuedId} to ${receiver.url}`,
    );
  });

  it('[attack:web.endpoint-of-another-company] keep the two sides apart when both have an endpoint: each receives only its own side’s events, and an endpoint is no page on the other side', async () => {
    const liveReceiver = new WebhookReceiver();
    await liveReceiver.start(serviceKey);
    try {
      const owner = await companyOwner(cloud, { name: 'Two-sided Couriers' });
      const base = `/company/${owner.companyId}`;
      const { secret } = await issueSandboxSecret(cloud.ctx, owner.companyId);
      await cloud.call('request', { org_id: owner.companyId, secret, sandbox: true });
      await owner.client.get(`${base}/callback`);
      const liveSaved = await owner.client.post(`${base}/callback`, { callback_url: liveReceiver.url });
      expect(liveSaved.status).toBe(200);
      const sandboxSaved = await owner.client.post(`${base}/sandbox/callback`, {
        callback_url: receiver.url,
      });
      expect(sandboxSaved.status).toBe(200);
      // Each side's endpoint is known on its own side only: the other side's address of it is no page.
      const idOf = (html: string) =>
        /action="\/company\/\d+(?:\/sandbox)?\/callback\/(\d+)\/kinds"/.exec(html)![1]!;
      const liveId = idOf(liveSaved.html);
      const sandboxId = idOf(sandboxSaved.html);
      expect((await owner.client.get(`${base}/callback/${liveId}`)).status).toBe(200);
      expect((await owner.client.get(`${base}/sandbox/callback/${sandboxId}`)).status).toBe(200);
      expect((await owner.client.get(`${base}/sandbox/callback/${liveId}`)).status).toBe(404);
      expect((await owner.client.get(`${base}/callback/${sandboxId}`)).status).toBe(404);
      expect((await owner.client.post(`${base}/callback/${sandboxId}/remove`)).status).toBe(404);
      expect((await owner.client.post(`${base}/sandbox/callback/${liveId}/remove`)).status).toBe(404);
      // Each side's test event, from its own events page.
      for (const side of ['', '/sandbox']) {
        await owner.client.get(`${base}${side}/events`);
        const sent = await owner.client.post(`${base}${side}/events/test`, {});
        expect(sent.location, side).toBe(`${base}${side}/events?done=test`);
      }
      expect(await deliverDue(cloud.ctx, { allowPrivateAddresses: true })).toEqual({
        delivered: 2,
        failed: 0,
      });
      expect(
        liveReceiver.received.map((got) => JSON.parse(got.body) as { type: string; sandbox?: boolean }),
      ).toEqual([expect.not.objectContaining({ sandbox: true })]);
      expect(receiver.received.map((got) => JSON.parse(got.body) as { sandbox?: boolean })).toEqual([
        expect.objectContaining({ type: 'ping', sandbox: true }),
      ]);
      expect(liveReceiver.received[0]!.event.type).toBe('ping');
    } finally {
      receiver.received.length = 0;
      await liveReceiver.stop();
    }
  });

  it('records each move a member makes on the sandbox page, in the move’s words, and none made by API', async () => {
    const owner = await companyOwner(cloud, { name: 'Moving Couriers', email: 'mo@example.com' });
    const base = `/company/${owner.companyId}`;
    const { secret } = await issueSandboxSecret(cloud.ctx, owner.companyId);
    const auth = { org_id: owner.companyId, secret, sandbox: true };
    const code = (await cloud.call('request', { ...auth })).body.code as string;
    await owner.client.get(`${base}/sandbox`);
    expect((await owner.client.post(`${base}/sandbox/callback`, { callback_url: receiver.url })).status).toBe(
      200,
    );
    expect((await owner.client.post(`${base}/sandbox/grant`, { code })).status).toBe(303);
    const status = await cloud.call('status', { ...auth, code });
    expect(status.body).toMatchObject({ state: 'issued' });
    const keyRef = status.body.key_ref as number;
    expect((await owner.client.post(`${base}/sandbox/outcome`, { outcome: 'busy' })).status).toBe(303);
    expect((await owner.client.post(`${base}/sandbox/withdraw`, { key_ref: String(keyRef) })).status).toBe(
      303,
    );
    // The company's own call moves the sandbox too, and is no member's action.
    const other = (await cloud.call('request', { ...auth })).body.code as string;
    expect((await cloud.call('sandbox', { ...auth, do: 'grant', code: other })).status).toBe(200);

    const lines = (await activity(owner)).filter((line) => line.startsWith('In the sandbox'));
    expect(lines).toHaveLength(4);
    expect(lines[3]).toContain(
      `In the sandbox, Owner <mo@example.com> added the callback address ${receiver.url} `,
    );
    expect(lines[0]).toContain(`In the sandbox, Owner <mo@example.com> withdrew key ${keyRef} `);
    expect(lines[1]).toContain(
      "In the sandbox, Owner <mo@example.com> chose what the barrier's next openings come to: busy ",
    );
    expect(lines[2]).toContain(
      `In the sandbox, Owner <mo@example.com> granted the request ${code} (key ${keyRef}) `,
    );
    // The operator API gives the same actions, each marked.
    const shown = await cloud.ops('GET', `/ops/companies/${owner.companyId}`);
    const marked = (shown.body.member_actions as { action: string; sandbox: boolean }[]).filter(
      (action) => action.sandbox,
    );
    expect(marked.map((action) => action.action)).toEqual([
      'sandbox-withdrawn',
      'sandbox-outcome',
      'sandbox-granted',
      'endpoint-added',
    ]);
    // The console and gatelink-admin say them in the same words.
    const console = new BrowserClient(cloud.app);
    console.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
    const consolePage = visibleText((await console.get(`/console/companies/${owner.companyId}`)).html);
    expect(consolePage).toContain(`In the sandbox, Owner <mo@example.com> withdrew key ${keyRef}`);
    const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
    const root = resolve(import.meta.dirname, '../..');
    const args = ['--url', cloud.baseUrl, '--token', cloud.operatorToken, 'company', 'show'];
    const printed = await runProgram(
      [resolve(root, 'bin/gatelink-admin.mjs'), ...args, String(owner.companyId)],
      {
        cwd: root,
        env,
      },
    );
    expect(printed, printed.stderr).toMatchObject({ code: 0 });
    expect(printed.stdout).toContain(`In the sandbox, Owner <mo@example.com> withdrew key ${keyRef}`);
    // Where the sandbox's events go is on its line, alike in all three.
    const use = `2 requests, 0 openings; next openings: busy; events to ${receiver.url}`;
    expect(shown.body.sandbox).toMatchObject({ callback_url: receiver.url, callback_failing: false });
    expect(consolePage).toContain(use);
    expect(printed.stdout).toContain(use);
  });
});
