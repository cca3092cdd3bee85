import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { RETRY_DELAYS_MS } from '../../cloud/rules/events/retry-schedule.js';
import type { Controller } from '../../device/runtime/controller.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { addEndpointRow, callbackCompany, enqueuePings } from '../support/event-company.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { parseSamples, type Sample, sampleValue } from '../support/prometheus-text.js';
import { type ProvisionedGate, provisionGate } from '../support/provisioned-gate.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `GET /metrics` as an operator's Prometheus reads it (docs/design.md section 8.1): behind the operator token,
 * and moving as openings, refusals, signed calls, Idempotency-Keys and failing webhook endpoints happen.
 */

let database: TestDatabase;
let cloud: TestCloud;
/** A second instance on the same database with a fake clock, to walk an endpoint through its retries. */
let eventsCloud: TestCloud;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const keyFiles = new KeyFileServer();
let receiver: WebhookReceiver;
let gate: ProvisionedGate;
let controller: Controller;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  eventsCloud = await startTestCloud({ database, clock });
  receiver = new WebhookReceiver();
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  await receiver.start((JSON.parse(published.body) as { key: string }).key);
  gate = await provisionGate(cloud);
  controller = await gate.startController();
});

afterAll(async () => {
  await controller?.stop();
  await gate?.remove();
  await receiver?.stop();
  await eventsCloud?.stop();
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
});

async function scrape(from: TestCloud = cloud): Promise<Sample[]> {
  const response = await from.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${from.operatorToken}` },
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseSamples(response.body);
}

/** A value that is absent counts as 0, as Prometheus's `increase` would see a series starting. */
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  sampleValue(samples, name, labels) ?? 0;

describe('/metrics', () => {
  it('[attack:ops.metrics-token] without the operator token, or with a wrong one, answers 401 and no metric', async () => {
    const wrong = `Bearer ${cloud.operatorToken.slice(0, -1)}x`;
    for (const headers of [{}, { authorization: wrong }, { authorization: cloud.operatorToken }]) {
      const response = await cloud.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(response.statusCode).toBe(401);
      expect(JSON.parse(response.body)).toMatchObject({ error: 'unauthorized' });
      expect(response.body).not.toContain('gatelink_');
    }
  });

  it('shows an opening as it happens: the answer, its duration, the ack applied and the controller', async () => {
    const keyRef = await gate.newKey();
    const before = await scrape();
    const answer = await gate.open(keyRef);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    let after = await scrape();
    // The answer leaves as soon as the ack is verified; the journal takes it a moment later.
    await waitFor(async () => {
      after = await scrape();
      return value(after, 'gatelink_acks_applied_total') > value(before, 'gatelink_acks_applied_total');
    }, 'the acknowledgement to be applied');
    const ok = { action: 'open', code: 'ok', status: '200' };
    expect(value(after, 'gatelink_company_api_answers_total', ok)).toBe(
      value(before, 'gatelink_company_api_answers_total', ok) + 1,
    );
    const opened = { outcome: 'opened' };
    expect(value(after, 'gatelink_open_duration_seconds_count', opened)).toBe(
      value(before, 'gatelink_open_duration_seconds_count', opened) + 1,
    );
    expect(value(after, 'gatelink_open_duration_seconds_bucket', { ...opened, le: '+Inf' })).toBe(
      value(after, 'gatelink_open_duration_seconds_count', opened),
    );
    expect(value(after, 'gatelink_acks_applied_total')).toBe(
      value(before, 'gatelink_acks_applied_total') + 1,
    );
    expect(sampleValue(after, 'gatelink_controllers_connected')).toBe(1);
    expect(
      sampleValue(after, 'gatelink_http_responses_total', { route: '/api/company.php', status: '200' }),
    ).toBeGreaterThan(0);
  });

  it('counts a refused opening under its code, and a call without an action as unknown', async () => {
    const before = await scrape();
    const company = await secretCompany(cloud, 'Stranger Ltd');
    const refused = await cloud.call('open', {
      ...company,
      key_ref: 999_999,
      number_id: gate.numberId,
      actor: 'A',
    });
    expect(refused.status).toBe(403);
    const code = refused.body.error as string;
    const noAction = await cloud.app.inject({ method: 'POST', url: '/api/company.php', payload: {} });
    expect(noAction.statusCode).toBe(400);

    const after = await scrape();
    const labels = { action: 'open', code, status: '403' };
    expect(value(after, 'gatelink_company_api_answers_total', labels)).toBe(
      value(before, 'gatelink_company_api_answers_total', labels) + 1,
    );
    expect(value(after, 'gatelink_open_duration_seconds_count', { outcome: code })).toBe(
      value(before, 'gatelink_open_duration_seconds_count', { outcome: code }) + 1,
    );
    const unknown = { action: 'unknown', code: 'unknown_action', status: '400' };
    expect(value(after, 'gatelink_company_api_answers_total', unknown)).toBe(
      value(before, 'gatelink_company_api_answers_total', unknown) + 1,
    );
  });

  it('shows the nonces of signed calls and the answers kept for Idempotency-Keys', async () => {
    const { signer } = await signatureCompany(cloud, keyFiles, 'metrics.example');
    const secret = await secretCompany(cloud, 'Idempotent Ltd');
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      expect((await cloud.signedCall('request', {}, signer)).status).toBe(200);
    }
    for (const key of ['first-key', 'second-key']) {
      expect((await cloud.call('request', secret, { 'idempotency-key': key })).status).toBe(200);
    }
    const after = await scrape();
    expect(value(after, 'gatelink_nonces')).toBe(value(before, 'gatelink_nonces') + 3);
    expect(value(after, 'gatelink_idempotency_keys')).toBe(value(before, 'gatelink_idempotency_keys') + 2);
  });

  it('shows the pool of database connections, and the process metrics with the prefix', async () => {
    const samples = await scrape();
    expect(sampleValue(samples, 'gatelink_db_pool_connections')).toBeGreaterThanOrEqual(1);
    // Nothing else runs: the scrape's own queries are not counted as waiting.
    expect(sampleValue(samples, 'gatelink_db_pool_waiting')).toBe(0);
    expect(sampleValue(samples, 'gatelink_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'gatelink_nodejs_eventloop_lag_seconds')).toBeDefined();
  });

  it('still answers when a gauge cannot be read: that gauge keeps its value and the failure is counted', async () => {
    const before = await scrape();
    const db = cloud.ctx.db;
    await sql`alter table idempotency rename to idempotency_elsewhere`.execute(db);
    let during: Sample[];
    try {
      during = await scrape();
    } finally {
      await sql`alter table idempotency_elsewhere rename to idempotency`.execute(db);
    }
    expect(sampleValue(during, 'gatelink_idempotency_keys')).toBe(
      sampleValue(before, 'gatelink_idempotency_keys'),
    );
    const failures = { gauge: 'idempotency_keys' };
    expect(value(during, 'gatelink_scrape_query_failures_total', failures)).toBe(
      value(before, 'gatelink_scrape_query_failures_total', failures) + 1,
    );
    expect(sampleValue(during, 'gatelink_nonces')).toBeDefined();
  });

  it('shows events pending while an endpoint fails, then failing once its retries are spent, once per endpoint', async () => {
    const deliver = () =>
      deliverDue(eventsCloud.ctx, { allowPrivateAddresses: true, timeoutMs: 300, random: () => 0.5 });
    receiver.answer = () => ({ status: 503 });
    const companyId = await callbackCompany(eventsCloud.ctx, 'Down Ltd', receiver.url);
    // A second endpoint, down too (docs/design.md section 6.2): each event waits there as well.
    const second = await addEndpointRow(eventsCloud.ctx, companyId, `${receiver.url}/second`);
    const before = await scrape(eventsCloud);
    await enqueuePings(eventsCloud.ctx, companyId, 2);

    const waiting = await scrape(eventsCloud);
    expect(value(waiting, 'gatelink_events_pending')).toBe(value(before, 'gatelink_events_pending') + 4);
    expect(await deliver()).toEqual({ delivered: 0, failed: 2 });
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await deliver();
    }

    const failing = await scrape(eventsCloud);
    expect(value(failing, 'gatelink_events_pending')).toBe(value(before, 'gatelink_events_pending'));
    expect(value(failing, 'gatelink_events_failing')).toBe(value(before, 'gatelink_events_failing') + 4);

    // Moved to another address, the second endpoint is failing no more: its events are pending again.
    await eventsCloud.ctx.db
      .updateTable('endpoints')
      .set({ url: `${receiver.url}/moved` })
      .where('id', '=', second)
      .execute();
    const moved = await scrape(eventsCloud);
    expect(value(moved, 'gatelink_events_pending')).toBe(value(before, 'gatelink_events_pending') + 2);
    expect(value(moved, 'gatelink_events_failing')).toBe(value(before, 'gatelink_events_failing') + 2);
  });
});
