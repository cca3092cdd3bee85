import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { approveCompany, createCompany } from '../../cloud/rules/companies/companies.js';
import { FAILURE_PAUSE_MS, RETRY_DELAYS_MS } from '../../cloud/rules/events/retry-schedule.js';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { addEndpointRow, callbackCompany, enqueuePings, outbox } from '../support/event-company.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `GET /ops/companies/:id/events` and `gatelink-admin events --company ID` (docs/design.md sections 6 and 6.2):
 * the operator reads a company's endpoints and delivery log, newest first, as a separate process over HTTP, in
 * the console's words.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const clock = new FakeClock(Date.parse('2026-05-04T10:00:00Z'));
const local = { allowPrivateAddresses: true, timeoutMs: 500, random: () => 0.5 };
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let companyId: number;
let eventIds: string[];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  receiver = new WebhookReceiver();
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  await receiver.start((JSON.parse(published.body) as { key: string }).key);
  companyId = await callbackCompany(cloud.ctx, 'Logged Ltd', receiver.url);
  await enqueuePings(cloud.ctx, companyId, 2);
  eventIds = (await outbox(cloud.ctx, companyId)).map((event) => event.id);
  let first = true;
  receiver.answer = () => {
    const status = first ? 502 : 200;
    first = false;
    return { status };
  };
  await deliverDue(cloud.ctx, local);
  clock.advance(FAILURE_PAUSE_MS);
  await deliverDue(cloud.ctx, local);
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

function admin(args: string[]): Promise<ProgramRun> {
  const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
  const argv = [ADMIN, '--url', cloud.baseUrl, '--token', cloud.operatorToken, ...args];
  return runProgram(argv, { cwd: ROOT, env });
}

describe("a company's delivery log for the operator", () => {
  it('answers the endpoint and every attempt, newest first, in pages', async () => {
    const answer = await cloud.ops('GET', `/ops/companies/${companyId}/events`);
    expect(answer.status).toBe(200);
    const endpoint = {
      id: expect.any(Number),
      url: receiver.url,
      failing_since: null,
      paused_until: null,
      last_error: 'answered 502; only a 2xx status is a delivery',
      kinds: null,
      waiting: 0,
      retrying: 0,
    };
    // The first endpoint, as before there were several, and every endpoint: here the one.
    expect(answer.body.endpoint).toEqual(endpoint);
    expect(answer.body.endpoints).toEqual([endpoint]);
    const deliveries = answer.body.deliveries as Record<string, unknown>[];
    expect(deliveries.map((row) => [row.event_id, row.attempt, row.outcome, row.status])).toEqual([
      [eventIds[1], 1, 'delivered', 200],
      [eventIds[0], 2, 'delivered', 200],
      [eventIds[0], 1, 'retry', 502],
    ]);
    expect(deliveries[2]).toMatchObject({
      endpoint_id: (answer.body.endpoint as { id: number }).id,
      url: receiver.url,
      at: '2026-05-04 10:00:00',
      next_attempt_at: '2026-05-04 10:00:30',
    });
    const older = await cloud.ops(
      'GET',
      `/ops/companies/${companyId}/events?limit=1&before=${deliveries[1]!.id as number}`,
    );
    expect((older.body.deliveries as Record<string, unknown>[]).map((row) => row.id)).toEqual([
      deliveries[2]!.id,
    ]);
    expect((await cloud.ops('GET', '/ops/companies/999999/events')).status).toBe(404);
  });

  it('gatelink-admin events --company ID prints it, and --json the answer itself', async () => {
    const run = await admin(['events', '--company', String(companyId)]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Events            sent to its callback address, every kind');
    expect(run.stdout).toMatch(
      new RegExp(
        `Endpoint \\d+ +${escaped(receiver.url)} · working · 0 waiting, 0 of them retried · takes every kind`,
      ),
    );
    expect(run.stdout).toContain('answered 502; only a 2xx status is a delivery');
    // Each log line says the address the attempt was made to.
    expect(run.stdout.split('\n').filter((line) => line.includes(`${receiver.url}  `))).toHaveLength(3);
    const json = await admin(['events', '--company', String(companyId), '--json']);
    const parsed = JSON.parse(json.stdout) as { deliveries: unknown[] };
    expect(parsed.deliveries).toHaveLength(3);
    const missing = await admin(['events']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('events needs --company');
  });

  it('says a company without a callback address has none, rather than calling its delivery working', async () => {
    const company = await createCompany(cloud.ctx, { name: 'Unwired Ltd' });
    await approveCompany(cloud.ctx, company.id);
    const run = await admin(['events', '--company', String(company.id)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Events            no callback address: nothing is sent');
    expect(run.stdout).toContain('Waiting           0 event(s), kept for about three days, then dropped');
    expect(run.stdout).not.toContain('working');
    await enqueuePings(cloud.ctx, company.id, 2);
    // The API answers `endpoint` in the shape it had without a callback address, and no endpoints.
    const answer = await cloud.ops('GET', `/ops/companies/${company.id}/events`);
    expect(answer.body).toEqual({
      endpoint: {
        url: null,
        failing_since: null,
        paused_until: null,
        last_error: null,
        kinds: null,
        waiting: 2,
        retrying: 0,
      },
      endpoints: [],
      deliveries: [],
    });
    const later = await admin(['events', '--company', String(company.id)]);
    expect(later.stdout).toContain('Waiting           2 event(s), kept for about three days, then dropped');
  });

  it('tells each of two endpoints, one failing, alike in the API, the CLI and the console', async () => {
    const split = await callbackCompany(cloud.ctx, 'Split Hooks Ltd', receiver.url);
    await approveCompany(cloud.ctx, split);
    const down = 'http://127.0.0.1:9/down';
    const downId = await addEndpointRow(cloud.ctx, split, down, ['open.succeeded']);
    await enqueuePings(cloud.ctx, split);
    await deliverDue(cloud.ctx, local);
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await deliverDue(cloud.ctx, local);
    }
    // Failing: a new event goes to the working endpoint alone, and waits at the failing one.
    await enqueuePings(cloud.ctx, split);
    await deliverDue(cloud.ctx, local);

    const answer = await cloud.ops('GET', `/ops/companies/${split}/events`);
    const endpoints = answer.body.endpoints as Record<string, unknown>[];
    expect(endpoints).toHaveLength(2);
    expect(answer.body.endpoint).toEqual(endpoints[0]);
    expect(endpoints[0]).toMatchObject({ url: receiver.url, failing_since: null, waiting: 0, retrying: 0 });
    expect(endpoints[1]).toMatchObject({
      id: downId,
      url: down,
      failing_since: expect.stringMatching(/^2026-05-0\d \d\d:\d\d:\d\d$/),
      kinds: ['open.succeeded'],
      waiting: 2,
      retrying: 1,
    });
    const lastError = String(endpoints[1]!.last_error);
    expect(lastError).not.toBe('');
    // The log of one endpoint alone.
    const downLog = await cloud.ops('GET', `/ops/companies/${split}/events?endpoint=${downId}`);
    const downRows = downLog.body.deliveries as Record<string, unknown>[];
    expect(downRows).toHaveLength(RETRY_DELAYS_MS.length + 1);
    expect(new Set(downRows.map((row) => `${row.endpoint_id} ${row.url}`))).toEqual(
      new Set([`${downId} ${down}`]),
    );
    const all = (answer.body.deliveries as Record<string, unknown>[]).map((row) => row.url);
    expect(all).toContain(receiver.url);
    expect((await cloud.ops('GET', `/ops/companies/${split}/events?endpoint=x`)).status).toBe(400);

    const summary = '2 endpoints, 1 failing: nothing is sent to it until it is fixed or retried';
    const run = await admin(['events', '--company', String(split)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Events            ${summary}`);
    expect(run.stdout).toMatch(
      new RegExp(
        `Endpoint \\d+ +${escaped(receiver.url)} · working · 0 waiting, 0 of them retried · takes every kind`,
      ),
    );
    expect(run.stdout).toContain(
      `Endpoint ${downId}`.padEnd(18) +
        `${down} · FAILING since ${endpoints[1]!.failing_since}: ${lastError}; nothing is sent there until the` +
        ' company changes the address or asks for a retry · 2 waiting, 1 of them retried · takes open.succeeded, ping',
    );

    const console = new BrowserClient(cloud.app);
    console.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
    const list = visibleText((await console.get(`/console?q=${split}`)).html);
    expect(list).toContain(`Events: ${summary}`);
    const page = visibleText((await console.get(`/console/companies/${split}`)).html);
    expect(page).toContain(`2 endpoints, 1 failing: nothing is sent to it until it is fixed or retried.`);
    expect(page).toMatch(
      new RegExp(`${escaped(receiver.url)} Working · 0 waiting, 0 of them retried · takes every kind`),
    );
    expect(page).toMatch(
      new RegExp(
        `${escaped(down)} Failing since .* · 2 waiting, 1 of them retried · takes open.succeeded, ping`,
      ),
    );
    expect(page).toContain(`Last error: ${lastError}`);
    expect(page).toMatch(
      new RegExp(`ping to ${escaped(down)} · attempt ${RETRY_DELAYS_MS.length + 1} · failed`),
    );
    expect(page).toMatch(new RegExp(`ping to ${escaped(receiver.url)} · attempt 1 · delivered`));
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
