import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { approveCompany, createCompany } from '../../cloud/rules/companies/companies.js';
import { FAILURE_PAUSE_MS } from '../../cloud/rules/events/retry-schedule.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings, outbox } from '../support/event-company.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `GET /ops/companies/:id/events` and `gatelink-admin events --company ID` (docs/design.md section 6): the
 * operator reads a company's endpoint and delivery log, newest first, as a separate process over HTTP.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const clock = new FakeClock(Date.parse('2026-05-04T10:00:00Z'));
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
  const local = { allowPrivateAddresses: true, timeoutMs: 500, random: () => 0.5 };
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
    expect(answer.body.endpoint).toEqual({
      url: receiver.url,
      failing_since: null,
      paused_until: null,
      last_error: 'answered 502; only a 2xx status is a delivery',
      kinds: null,
      waiting: 0,
      retrying: 0,
    });
    const deliveries = answer.body.deliveries as Record<string, unknown>[];
    expect(deliveries.map((row) => [row.event_id, row.attempt, row.outcome, row.status])).toEqual([
      [eventIds[1], 1, 'delivered', 200],
      [eventIds[0], 2, 'delivered', 200],
      [eventIds[0], 1, 'retry', 502],
    ]);
    expect(deliveries[2]).toMatchObject({
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
    expect(run.stdout).toContain(`Callback address  ${receiver.url}`);
    expect(run.stdout).toContain('State             working');
    expect(run.stdout).toContain('Takes             every kind');
    expect(run.stdout).toContain('answered 502; only a 2xx status is a delivery');
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
    expect(run.stdout).toContain(
      'Callback address  (none: events are kept for about three days, then dropped)',
    );
    expect(run.stdout).toContain('State             no callback address: nothing is sent');
    expect(run.stdout).not.toContain('working');
  });
});
