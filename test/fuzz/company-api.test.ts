import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { CROCKFORD_ALPHABET } from '../../shared/codes.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { ERRORS, type ErrorCode } from '../../shared/errors.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { sendRaw } from '../support/raw-http.js';
import {
  type FuzzCall,
  type FuzzWorld,
  injectCall,
  openCall,
  rawRequest,
} from './company-api-arbitraries.js';
import { fuzzParameters, fuzzTimeoutMs } from './settings.js';

/**
 * Property-based tests of the company API (docs/design.md section 1, cloud/README.md "Errors"): whatever a
 * client sends, through Fastify's inject and through a real socket, the answer is a success or an error of the
 * table with its status, never a 5xx but a device's, always with X-Request-Id; the process sees no unhandled
 * failure; and a refused call leaves nothing behind in the database.
 */

const INJECT_RUNS = 300;
const OPEN_RUNS = 100;
const RAW_RUNS = 60;

let keyFiles: KeyFileServer;
let database: TestDatabase;
let cloud: TestCloud;
let world: FuzzWorld;
let port: number;
const failures: unknown[] = [];
const recordFailure = (error: unknown) => failures.push(error);

beforeAll(async () => {
  process.on('unhandledRejection', recordFailure);
  process.on('uncaughtException', recordFailure);
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template, OPEN_RATE_LIMIT: '5' },
  });
  port = Number(new URL(cloud.baseUrl).port);
  world = await buildWorld();
});

afterAll(async () => {
  process.off('unhandledRejection', recordFailure);
  process.off('uncaughtException', recordFailure);
  await cloud?.stop();
  await database?.close();
  await keyFiles?.stop();
});

/**
 * Companies of both modes, a customer's barrier whose controller is not connected (so that a right `open`
 * ends in 503 `device_offline`), and keys of every state: valid for each company, revoked, expired.
 */
async function buildWorld(): Promise<FuzzWorld> {
  const secret = await secretCompany(cloud, 'Fuzz Secret Ltd');
  const signed = await signatureCompany(cloud, keyFiles, 'fuzz.example');
  const customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
  const barrier = await insertBarrier(customerId);
  const issue = async (code: string, objectIds: number[]) =>
    (
      await issueAccessKey(cloud.ctx, {
        code,
        customerId,
        deviceId: barrier.deviceId,
        objectIds,
        keyExpiresAt: null,
      })
    ).keyRef;
  const claimed = async (answer: Promise<{ body: Record<string, unknown> }>) => {
    const code = (await answer).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    return code;
  };
  const codes = [
    await claimed(cloud.call('request', { ...secret })),
    await claimed(cloud.call('request', { ...secret })),
    await claimed(cloud.call('request', { ...secret })),
    await claimed(cloud.signedCall('request', {}, signed.signer)),
  ];
  const keyRefs = [
    await issue(codes[0]!, [barrier.objects[0]!]),
    await issue(codes[1]!, barrier.objects),
    await issue(codes[2]!, [barrier.objects[1]!]),
    await issue(codes[3]!, barrier.objects),
  ];
  await revokeAccessKey(cloud.ctx, { keyRef: keyRefs[1]!, customerId });
  await cloud.ctx.db
    .updateTable('keys')
    .set({ expires_at: new Date(Date.now() - 3600_000) })
    .where('id', '=', keyRefs[2]!)
    .execute();
  codes.push((await cloud.call('request', { ...secret })).body.code as string);
  return {
    secret,
    signer: { ...signed.signer, org_id: signed.id },
    wrongKey: SigningKey.generate(),
    codes,
    keyRefs,
    numberIds: barrier.objects,
  };
}

async function insertBarrier(customerId: number): Promise<{ deviceId: string; objects: number[] }> {
  const deviceId = `D${Array.from(randomBytes(10), (byte) => CROCKFORD_ALPHABET[byte % 32]).join('')}`;
  await cloud.ctx.db
    .insertInto('devices')
    .values({ id: deviceId, label: 'Yard', customer_id: customerId, created_at: new Date() })
    .execute();
  const objects = await cloud.ctx.db
    .insertInto('device_objects')
    .values([
      { device_id: deviceId, local_id: 'gate', label: 'Main gate', kind: 'relay' },
      { device_id: deviceId, local_id: 'door', label: 'Side door', kind: 'relay' },
    ])
    .returning('id')
    .execute();
  return { deviceId, objects: objects.map((object) => object.id) };
}

/** One answer as the invariants read it. */
interface Seen {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  head: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Stack frames, source positions and database text that an answer must never carry. */
const LEAKS = [
  /\n\s+at /,
  / {4}at /,
  /node:internal/,
  /\.[jt]s:\d+/,
  /\b(select|insert into|update \w+ set|delete from)\b/i,
  /sqlstate|syntax error|relation "|violates|pglite|postgres|kysely/i,
];
/** Errors that only a call to a controller can give (cloud/README.md, "Opening"). */
const DEVICE_ERRORS: readonly string[] = ['device_offline', 'device_timeout', 'device_error'];
/** Outcomes of `open` that the customer's journal records (docs/design.md section 4). */
const JOURNALLED: readonly string[] = ['revoked', 'expired', 'forbidden', 'rate_limit', ...DEVICE_ERRORS];
/** Refusals and failures that always name a key of the caller, so always leave an entry. */
const ALWAYS_JOURNALLED: readonly string[] = ['revoked', 'expired', 'rate_limit', 'device_offline'];
const requestIds = new Set<string>();

function expectInContract(seen: Seen): void {
  const requestId = seen.headers['x-request-id'];
  expect(requestId, 'X-Request-Id').toMatch(UUID);
  expect(requestIds.has(String(requestId)), 'a fresh X-Request-Id').toBe(false);
  requestIds.add(String(requestId));
  if (seen.head) {
    expect(
      Object.values(ERRORS).map((error) => error.status),
      'a status of the table',
    ).toContain(seen.status);
    return;
  }
  expect(String(seen.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(seen.text) as Record<string, unknown>;
  expect(body !== null && typeof body === 'object' && !Array.isArray(body)).toBe(true);
  if (seen.status === 200) expectSuccess(body);
  else expectError(seen.status, body, seen.headers);
}

function expectSuccess(body: Record<string, unknown>): void {
  expect(body.error).toBeUndefined();
  const shape = 'ok' in body ? 'open' : 'url' in body ? 'request' : 'status';
  if (shape === 'open') expect(body).toEqual({ ok: 1, id: expect.any(Number) });
  else expect(body.code).toMatch(/^[0-9A-Z]{12}$/);
}

function expectError(
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string | string[] | number | undefined>,
): void {
  const code = body.error as ErrorCode;
  expect(Object.keys(ERRORS), 'a code of shared/errors.ts').toContain(code);
  expect(status, `the status of ${code}`).toBe(ERRORS[code].status);
  if (status >= 500) expect(DEVICE_ERRORS, 'a 5xx only from a controller').toContain(code);
  expect(Object.keys(body).filter((key) => !['error', 'message', 'field', 'detail'].includes(key))).toEqual(
    [],
  );
  expect(typeof body.message === 'string' && body.message.length > 0).toBe(true);
  for (const leak of LEAKS) expect(body.message as string).not.toMatch(leak);
  if (status === 405) expect(headers.allow).toBe('POST');
  if (code === 'rate_limit') expect(Number(headers['retry-after'])).toBeGreaterThan(0);
  if (body.field !== undefined) expect([code, typeof body.field]).toEqual(['invalid_field', 'string']);
  if (body.detail !== undefined) expect([code, typeof body.detail]).toEqual(['device_error', 'string']);
}

/** What a call may leave in the database: rows only for the answers that say something was done. */
interface Rows {
  requests: number;
  journal: number;
  pendingIdempotency: number;
}

async function countRows(): Promise<Rows> {
  const count = async (table: 'requests' | 'journal') =>
    Number(
      (
        await cloud.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const pending = await cloud.ctx.db
    .selectFrom('idempotency')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', 'is', null)
    .executeTakeFirstOrThrow();
  return {
    requests: await count('requests'),
    journal: await count('journal'),
    pendingIdempotency: Number(pending.n),
  };
}

function expectRowsAccountedFor(before: Rows, after: Rows, answers: Seen[]): void {
  const bodies = answers
    .filter((seen) => !seen.head)
    .map((seen) => JSON.parse(seen.text) as Record<string, unknown>);
  const created = bodies.filter((body) => typeof body.url === 'string').length;
  const journalled = bodies.filter((body) => body.ok === 1 || JOURNALLED.includes(String(body.error))).length;
  expect(after.requests - before.requests, 'request rows only for answered requests').toBeLessThanOrEqual(
    created,
  );
  expect(after.requests).toBeGreaterThanOrEqual(before.requests);
  expect(after.journal - before.journal, 'journal entries only for journalled outcomes').toBeLessThanOrEqual(
    journalled,
  );
  expect(after.pendingIdempotency, 'no Idempotency-Key left claimed').toBe(0);
}

async function injected(call: FuzzCall): Promise<Seen> {
  const response = await cloud.app.inject({
    method: call.method as 'POST',
    url: call.url,
    headers: call.headers,
    payload: call.body,
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: response.body,
    head: call.method === 'HEAD',
  };
}

function expectNoProcessFailure(): void {
  expect(failures.map(String), 'unhandled rejections or uncaught exceptions').toEqual([]);
}

describe('[attack:fuzz.company-api] the company API under arbitrary input', () => {
  it(
    'through inject: every answer is in the error contract, and a refused call leaves nothing behind',
    async () => {
      await fc.assert(
        fc.asyncProperty(injectCall(world), async (call) => {
          const before = await countRows();
          const seen = await injected(call);
          expectInContract(seen);
          expectRowsAccountedFor(before, await countRows(), [seen]);
          expectNoProcessFailure();
        }),
        fuzzParameters(INJECT_RUNS),
      );
    },
    fuzzTimeoutMs,
  );

  it(
    'open past authentication: every outcome is journalled or refused as the contract says',
    async () => {
      await fc.assert(
        fc.asyncProperty(openCall(world), async (call) => {
          const before = await countRows();
          const seen = await injected(call);
          expectInContract(seen);
          const after = await countRows();
          expectRowsAccountedFor(before, after, [seen]);
          const error = String((JSON.parse(seen.text) as Record<string, unknown>).error);
          if (ALWAYS_JOURNALLED.includes(error) && call.headers['idempotency-key'] === undefined) {
            expect(after.journal - before.journal, `the journal entry of ${error}`).toBe(1);
          }
          expectNoProcessFailure();
        }),
        fuzzParameters(OPEN_RUNS),
      );
    },
    fuzzTimeoutMs,
  );

  it(
    "through a socket: whatever bytes reach Node's parser, every answer is in the error contract",
    async () => {
      await fc.assert(
        fc.asyncProperty(rawRequest(world), async ({ bytes, head, halfClose }) => {
          const before = await countRows();
          const exchange = await sendRaw(port, bytes, { quietMs: 100, head, halfClose });
          const answers = exchange.responses
            .filter((response) => response.status >= 200)
            .map((response) => ({
              status: response.status,
              headers: response.headers,
              text: response.body,
              head,
            }));
          expect(exchange.closed, 'the connection is closed in the end').toBe(true);
          expect(exchange.rest, 'no answer cut off').toBe('');
          for (const seen of answers) expectInContract(seen);
          expectRowsAccountedFor(before, await countRows(), answers);
          expectNoProcessFailure();
        }),
        fuzzParameters(RAW_RUNS),
      );
    },
    fuzzTimeoutMs,
  );
});
