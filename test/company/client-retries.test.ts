import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  GatelinkClient,
  type GatelinkClientOptions,
  type IssuedStatus,
  isGatelinkError,
} from '../../company/client/index.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { freePort } from '../support/ports.js';
import { ScriptedProxy } from '../support/scripted-proxy.js';
import { grantRequest, type SimulatedBarrier, simulatedBarrier } from '../support/simulated-barrier.js';

/**
 * The company client's retries (docs/design.md section 11.6; cloud/README.md, "Retries: Idempotency-Key"),
 * through a proxy that answers as each test scripts it and forwards the rest to a running cloud and a real
 * controller runtime. Waits go to an injected sleep, which records them: nothing here waits for real.
 */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DEVICE_TIMEOUT = JSON.stringify({
  error: 'device_timeout',
  message: 'The controller did not confirm the opening within 8 s.',
});

let keyFiles: KeyFileServer;
let database: TestDatabase;
let cloud: TestCloud;
let barrier: SimulatedBarrier;
let proxy: ScriptedProxy;
let signed: GatelinkClientOptions['auth'];
let secret: GatelinkClientOptions['auth'];
/** A key granted on the barrier, held by the signing company. */
let access: IssuedStatus;
let sleeps: number[];

beforeAll(async () => {
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  barrier = await simulatedBarrier(cloud);
  proxy = new ScriptedProxy(cloud.baseUrl);
  await proxy.start();
  signed = (await signatureCompany(cloud, keyFiles, 'client-retries.example')).signer;
  const company = await secretCompany(cloud, 'Retrying Couriers');
  secret = { orgId: company.org_id, secret: company.secret };
  const direct = new GatelinkClient({ baseUrl: cloud.baseUrl, auth: signed });
  const { code } = await direct.request();
  await grantRequest(barrier, code);
  access = await direct.waitForAccess(code);
});

beforeEach(() => {
  proxy.seen.length = 0;
  proxy.script = [];
  sleeps = [];
});

afterAll(async () => {
  await proxy?.stop();
  await barrier?.stop();
  await cloud?.stop();
  await database?.close();
  await keyFiles?.stop();
});

/** A client through the proxy whose waits are recorded, with the jitter at its middle. */
function client(options: Partial<GatelinkClientOptions> = {}): GatelinkClient {
  return new GatelinkClient({
    baseUrl: proxy.url,
    auth: signed,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
}

const openGate = (through: GatelinkClient, options?: Parameters<GatelinkClient['open']>[1]) =>
  through.open({ key_ref: access.key_ref, number_id: barrier.numbers.gate, actor: 'Anna' }, options);
const pulses = () => barrier.driver.pulses.get('gate') ?? 0;
const header = (name: string) => proxy.seen.map((seen) => seen.headers[name]);

describe('a call sent again', () => {
  it('after a 503: the same Idempotency-Key and body, a fresh nonce and signature; the gate opens once', async () => {
    proxy.script = [{ status: 503, body: 'Service Unavailable' }];
    const before = pulses();
    const opened = await openGate(client());
    expect(opened.ok).toBe(1);
    expect(pulses()).toBe(before + 1);
    expect(proxy.seen).toHaveLength(2);
    const [first, second] = header('idempotency-key');
    expect(first).toMatch(UUID_V4);
    expect(second).toBe(first);
    expect(new Set(header('x-service-nonce')).size).toBe(2);
    expect(new Set(header('x-service-sig')).size).toBe(2);
    expect(proxy.seen[1]!.body).toBe(proxy.seen[0]!.body);
    // Full jitter below the first ceiling of 500 ms.
    expect(sleeps).toEqual([250]);
  });

  it('after its answer was lost: the retry gets the first outcome, and the gate opened once', async () => {
    proxy.script = ['lose-answer'];
    const before = pulses();
    const opened = await openGate(client());
    expect(pulses()).toBe(before + 1);
    expect(proxy.seen).toHaveLength(2);
    expect(header('idempotency-key')[1]).toBe(header('idempotency-key')[0]);
    const entry = await cloud.ctx.db
      .selectFrom('journal')
      .select(['id', 'outcome'])
      .where('key_id', '=', access.key_ref)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(opened.id).toBe(entry.id);
  });

  it('a request whose answer was lost is made once: the retry returns the same code', async () => {
    proxy.script = ['lose-answer'];
    const created = await client().request({ ref: 'ORD-LOST' });
    const rows = await cloud.ctx.db
      .selectFrom('requests')
      .select('code')
      .where('ref', '=', 'ORD-LOST')
      .execute();
    expect(rows.map((row) => row.code)).toEqual([created.code]);
  });

  it('in secret mode: the very same bytes, org_id and secret included, under the same key', async () => {
    proxy.script = [{ status: 503 }, { status: 503 }];
    const created = await client({ auth: secret }).request({ ref: 'ORD-S' });
    expect(created.code).toMatch(/^[0-9A-Z]{12}$/);
    expect(proxy.seen).toHaveLength(3);
    expect(new Set(proxy.seen.map((seen) => seen.body)).size).toBe(1);
    expect(JSON.parse(proxy.seen[0]!.body)).toMatchObject({ org_id: expect.any(Number), ref: 'ORD-S' });
    expect(new Set(header('idempotency-key')).size).toBe(1);
    expect(sleeps).toEqual([250, 500]);
  });

  it('with the key given by the caller: a second call with it replays the first opening', async () => {
    const before = pulses();
    const first = await openGate(client(), { idempotencyKey: 'shift-2-open-17' });
    const again = await openGate(client(), { idempotencyKey: 'shift-2-open-17' });
    expect(again).toEqual(first);
    expect(pulses()).toBe(before + 1);
    expect(header('idempotency-key')).toEqual(['shift-2-open-17', 'shift-2-open-17']);
  });

  it('while the first attempt is still running (409 idempotency_in_progress), with the same key', async () => {
    proxy.script = [
      { status: 409, body: JSON.stringify({ error: 'idempotency_in_progress', message: 'still running' }) },
    ];
    await openGate(client());
    expect(proxy.seen).toHaveLength(2);
    expect(header('idempotency-key')[1]).toBe(header('idempotency-key')[0]);
  });
});

describe('Retry-After', () => {
  const limited = (retryAfter: string) => ({
    status: 429,
    headers: { 'retry-after': retryAfter, 'content-type': 'application/json' },
    body: JSON.stringify({ error: 'rate_limit', message: 'Too many openings.' }),
  });

  it('in seconds is waited for exactly, then the call runs', async () => {
    proxy.script = [limited('7')];
    await openGate(client());
    expect(sleeps).toEqual([7000]);
    expect(proxy.seen).toHaveLength(2);
  });

  it('on an overloaded cloud is waited for, then the same opening runs once', async () => {
    proxy.script = [
      {
        status: 503,
        headers: { 'retry-after': '1', 'content-type': 'application/json' },
        body: JSON.stringify({
          ok: 0,
          error: 'overloaded',
          message: 'As many openings waiting as it can take.',
        }),
      },
    ];
    const before = pulses();
    await openGate(client());
    expect(sleeps).toEqual([1000]);
    expect(proxy.seen).toHaveLength(2);
    expect(header('idempotency-key')[1]).toBe(header('idempotency-key')[0]);
    expect(pulses()).toBe(before + 1);
  });

  it('as an HTTP-date is waited for until that time', async () => {
    const now = Date.parse('2026-05-04T10:00:00Z');
    proxy.script = [limited('Mon, 04 May 2026 10:00:12 GMT')];
    await client({ now: () => now, auth: secret }).request();
    expect(sleeps).toEqual([12_000]);
  });

  it('longer than the client waits is handed to the caller: rate_limit with retryAfterSeconds', async () => {
    proxy.script = [limited('120')];
    const error = await openGate(client()).catch((e: unknown) => e);
    if (!isGatelinkError(error, 'rate_limit')) throw error;
    expect({
      status: error.status,
      retryAfterSeconds: error.retryAfterSeconds,
      attempts: error.attempts,
    }).toEqual({ status: 429, retryAfterSeconds: 120, attempts: 1 });
    expect(error.idempotencyKey).toMatch(UUID_V4);
    expect(sleeps).toEqual([]);
  });
});

describe('no answer', () => {
  it('a dropped connection is retried for a call with a key, and for status', async () => {
    proxy.script = ['reset'];
    await openGate(client());
    expect(proxy.seen).toHaveLength(2);
    proxy.script = ['reset'];
    expect((await client().status(access.code)).state).toBe('issued');
    expect(proxy.seen).toHaveLength(4);
  });

  it('a dropped connection is not retried for an open without a key: it may have reached the gate', async () => {
    proxy.script = ['reset'];
    const error = await openGate(client(), { idempotencyKey: false }).catch((e: unknown) => e);
    if (!isGatelinkError(error, 'network_error')) throw error;
    expect({ status: error.status, attempts: error.attempts }).toEqual({ status: 0, attempts: 1 });
    expect(error.message).toContain('may have reached the cloud');
    expect(header('idempotency-key')).toEqual([undefined]);
  });

  it('a refused connection is retried with growing backoff, then network_error', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const error = await client({ baseUrl: nobody })
      .open({ key_ref: 1, number_id: 1, actor: 'Anna' }, { idempotencyKey: false })
      .catch((e: unknown) => e);
    if (!isGatelinkError(error, 'network_error')) throw error;
    expect(error.attempts).toBe(4);
    expect(error.detail).toBe('ECONNREFUSED');
    expect(sleeps).toEqual([250, 500, 1000]);
  });

  it('no answer within timeoutMs is retried for status, then network_error', async () => {
    proxy.script = ['hang', 'hang'];
    const error = await client({ retries: 1, timeoutMs: 50 })
      .status(access.code)
      .catch((e: unknown) => e);
    if (!isGatelinkError(error, 'network_error')) throw error;
    expect({ attempts: error.attempts, detail: error.detail }).toEqual({
      attempts: 2,
      detail: 'no answer in time',
    });
  });
});

describe('not sent again', () => {
  it('a 504 for an open without a key: the gate may have opened', async () => {
    proxy.script = [{ status: 504, body: '<html>Gateway Timeout</html>' }];
    const before = pulses();
    const error = await openGate(client(), { idempotencyKey: false }).catch((e: unknown) => e);
    if (!isGatelinkError(error, 'unexpected_answer')) throw error;
    expect({ status: error.status, attempts: error.attempts }).toEqual({ status: 504, attempts: 1 });
    expect(proxy.seen).toHaveLength(1);
    expect(pulses()).toBe(before);
  });

  it('but a proxy 504 for an open with its key is: the cloud answers the retry with the first outcome', async () => {
    proxy.script = [{ status: 504, body: '<html>Gateway Timeout</html>' }];
    const before = pulses();
    expect((await openGate(client())).ok).toBe(1);
    expect(proxy.seen).toHaveLength(2);
    expect(pulses()).toBe(before + 1);
  });

  it("the cloud's own device_timeout: a retry with the same key would get the same answer back", async () => {
    proxy.script = [{ status: 504, headers: { 'content-type': 'application/json' }, body: DEVICE_TIMEOUT }];
    const error = await openGate(client()).catch((e: unknown) => e);
    if (!isGatelinkError(error, 'device_timeout')) throw error;
    expect({ status: error.status, attempts: error.attempts }).toEqual({ status: 504, attempts: 1 });
    expect(error.idempotencyKey).toMatch(UUID_V4);
  });

  it('a refusal: 403 forbidden for an object outside the key', async () => {
    const error = await client()
      .open({ key_ref: access.key_ref, number_id: 999_999, actor: 'Anna' })
      .catch((e: unknown) => e);
    expect(isGatelinkError(error, 'forbidden') && error.attempts).toBe(1);
    expect(proxy.seen).toHaveLength(1);
  });
});
