import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatelinkClient, type GatelinkClientOptions, isGatelinkError } from '../../company/client/index.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import {
  grantRequest,
  type SimulatedBarrier,
  simulatedBarrier,
  withdrawKey,
} from '../support/simulated-barrier.js';

/**
 * The company client (docs/design.md section 11.6) against a running cloud over HTTP, in both authentication
 * modes: request, status, waiting for the customer's grant, and opening a real controller runtime; the cloud's
 * refusals as typed errors; answers checked against the shared schemas.
 */
let keyFiles: KeyFileServer;
let database: TestDatabase;
let cloud: TestCloud;
let barrier: SimulatedBarrier;
type Mode = 'signature' | 'secret';
const auths = {} as Record<Mode, GatelinkClientOptions['auth']>;
const clients = {} as Record<Mode, GatelinkClient>;

/** Polls without waiting: a test that needs time to pass makes it pass in `sleep`. */
const noWait = async () => {};

function clientFor(auth: GatelinkClientOptions['auth'], options: Partial<GatelinkClientOptions> = {}) {
  return new GatelinkClient({ baseUrl: cloud.baseUrl, auth, sleep: noWait, ...options });
}

beforeAll(async () => {
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  barrier = await simulatedBarrier(cloud);
  auths.signature = (await signatureCompany(cloud, keyFiles, 'client-calls.example')).signer;
  const secret = await secretCompany(cloud, 'Secret Couriers');
  auths.secret = { orgId: secret.org_id, secret: secret.secret };
  clients.signature = clientFor(auths.signature);
  clients.secret = clientFor(auths.secret);
});

afterAll(async () => {
  await barrier?.stop();
  await cloud?.stop();
  await database?.close();
  await keyFiles?.stop();
});

describe.each(['signature', 'secret'] as const)('in %s mode', (mode) => {
  it('makes a request, reads it, waits for the grant and opens the gate', async () => {
    const client = clients[mode];
    const created = await client.request({ ref: `ORD-${mode}`, ttl_hours: 2 });
    expect(created.url).toBe(`${cloud.baseUrl}/c/${created.code}`);
    expect(created.expires_in_hours).toBe(2);
    expect(await client.status(created.code)).toMatchObject({
      code: created.code,
      state: 'new',
      ref: `ORD-${mode}`,
    });

    // The customer grants while the client waits between two polls.
    let polls = 0;
    const waiting = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: auths[mode],
      sleep: async () => {
        polls += 1;
        if (polls === 1) await grantRequest(barrier, created.code);
      },
    });
    const access = await waiting.waitForAccess(created.code, { intervalMs: 1 });
    expect(polls).toBe(1);
    expect(access.state).toBe('issued');
    expect(access.numbers.map((n) => n.number_id)).toEqual([barrier.numbers.gate, barrier.numbers.garage]);

    const before = barrier.driver.pulses.get('gate') ?? 0;
    const opened = await client.open({
      key_ref: access.key_ref,
      number_id: barrier.numbers.gate,
      actor: 'Anna',
    });
    expect(opened).toEqual({ ok: 1, id: expect.any(Number) });
    expect(barrier.driver.pulses.get('gate')).toBe(before + 1);
  });
});

describe('waiting for access', () => {
  it('ends with a revoked error when the customer withdraws the key', async () => {
    const client = clients.secret;
    const { code } = await client.request();
    await grantRequest(barrier, code);
    const { key_ref } = await client.waitForAccess(code);
    await withdrawKey(barrier, key_ref);
    const error = await client.waitForAccess(code).catch((e: unknown) => e);
    expect(isGatelinkError(error, 'revoked')).toBe(true);
  });

  it('ends with an expired error when the request lapses before the customer comes', async () => {
    const client = clients.signature;
    const { code } = await client.request({ ttl_hours: 1 });
    let polls = 0;
    const waiting = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: auths.signature,
      sleep: async () => {
        polls += 1;
        // The request's hour passes.
        await cloud.ctx.db
          .updateTable('requests')
          .set({ expires_at: new Date(Date.now() - 1000) })
          .where('code', '=', code)
          .execute();
      },
    });
    const error = await waiting.waitForAccess(code).catch((e: unknown) => e);
    expect(polls).toBe(1);
    expect(isGatelinkError(error, 'expired') && error.message).toContain(code);
  });

  it('ends with a declined error when the customer says no', async () => {
    const { code } = await clients.secret.request({ ref: 'ORD-NO' });
    const { client: customer } = barrier.customer;
    let polls = 0;
    const waiting = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: auths.secret,
      sleep: async () => {
        polls += 1;
        // The customer opens the link, continues, and declines.
        await customer.get(`/c/${code}`);
        await customer.post(`/c/${code}/claim`);
        await customer.get(`/c/${code}`);
        await customer.post(`/c/${code}/decline`);
      },
    });
    const error = await waiting.waitForAccess(code).catch((e: unknown) => e);
    expect(polls).toBe(1);
    if (!isGatelinkError(error, 'declined')) throw error;
    expect(error.status).toBe(200);
    expect(error.message).toContain(code);
    expect(await clients.secret.status(code)).toMatchObject({
      state: 'declined',
      declined_at: expect.any(String),
    });
  });

  it('stops when its signal is aborted', async () => {
    const { code } = await clients.secret.request();
    const stop = new AbortController();
    const waiting = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: auths.secret,
      sleep: async () => stop.abort(new Error('the driver left')),
    });
    await expect(waiting.waitForAccess(code, { signal: stop.signal })).rejects.toThrow('the driver left');
  });
});

describe('refusals as typed errors', () => {
  it('a withdrawn key: 403 revoked, with the request id of the answer', async () => {
    const client = clients.signature;
    const { code } = await client.request();
    await grantRequest(barrier, code);
    const { key_ref } = await client.waitForAccess(code);
    await withdrawKey(barrier, key_ref);
    const error = await client
      .open({ key_ref, number_id: barrier.numbers.gate, actor: 'Anna' })
      .catch((e: unknown) => e);
    if (!isGatelinkError(error, 'revoked')) throw error;
    expect({ status: error.status, attempts: error.attempts }).toEqual({ status: 403, attempts: 1 });
    expect(error.requestId).toMatch(/\S/);
    expect(error.message).toBe('The customer withdrew this access.');
  });

  it('a bad field: 400 invalid_field naming it', async () => {
    const error = await clients.secret.request({ ttl_hours: 0 }).catch((e: unknown) => e);
    if (!isGatelinkError(error, 'invalid_field')) throw error;
    expect({ status: error.status, field: error.field }).toEqual({ status: 400, field: 'ttl_hours' });
    const actor = await clients.secret
      .open({ key_ref: 1, number_id: 1, actor: 'Anna\u202e' })
      .catch((e: unknown) => e);
    expect(isGatelinkError(actor, 'invalid_field') && actor.field).toBe('actor');
  });

  it('an unknown code: 404 not_found', async () => {
    const error = await clients.signature.status('ZZZZZZZZZZZZ').catch((e: unknown) => e);
    expect(isGatelinkError(error, 'not_found') && error.status).toBe(404);
    expect(isGatelinkError(error, 'revoked')).toBe(false);
  });

  it('a key the cloud does not know: 401 bad_signature, not retried', async () => {
    let attempts = 0;
    const client = clientFor(
      { domain: 'client-calls.example', key: SigningKey.generate() },
      {
        fetch: (input, init) => {
          attempts += 1;
          return fetch(input, init);
        },
      },
    );
    const error = await client.request().catch((e: unknown) => e);
    expect(isGatelinkError(error, 'bad_signature')).toBe(true);
    expect(attempts).toBe(1);
  });
});

describe('answers', () => {
  /** The real answer with something changed on the way back. */
  function rewriting(change: (body: Record<string, unknown>) => Record<string, unknown>): typeof fetch {
    return async (input, init) => {
      const real = await fetch(input, init);
      const body = change((await real.json()) as Record<string, unknown>);
      return new Response(JSON.stringify(body), { status: real.status, headers: real.headers });
    };
  }

  it('pass with fields added later', async () => {
    const client = clientFor(auths.secret, { fetch: rewriting((body) => ({ ...body, qr_svg: '<svg/>' })) });
    const created = await client.request({ ref: 'ORD-9' });
    expect(created.code).toMatch(/^[0-9A-Z]{12}$/);
  });

  it('that do not match the schema are an error saying so, not a half-filled object', async () => {
    const client = clientFor(auths.secret, { fetch: rewriting(({ code: _code, ...rest }) => rest) });
    const error = await client.request().catch((e: unknown) => e);
    if (!isGatelinkError(error, 'unexpected_answer')) throw error;
    expect(error.status).toBe(200);
    expect(error.message).toContain('(code)');
  });
});
