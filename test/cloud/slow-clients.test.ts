import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpTimeouts } from '../../cloud/foundation/http/timeouts.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { open, parseResponses, type RawResponse, sendRaw, trickle } from '../support/raw-http.js';

/**
 * Slow HTTP clients (cloud/foundation/http/timeouts.ts): a client that sends its request a byte at a time is cut off
 * with 408 `request_timeout` in the error contract, and while many do, real calls keep being answered. The
 * timeouts are small here so that the cut comes soon; nothing below depends on how soon.
 */

const TIMEOUTS: HttpTimeouts = { headersMs: 300, requestMs: 600, keepAliveMs: 300, checkIntervalMs: 50 };
const SLOW_CLIENTS = 50;
/** Slower than a byte per check: a header of this many bytes never completes before the cut. */
const BYTE_INTERVAL_MS = 20;
const STATUS_LINE = 'POST /api/company.php?a=status HTTP/1.1\r\nHost: localhost\r\n';
const HEADER_NEVER_DONE = `${STATUS_LINE}X-Padding: ${'x'.repeat(100_000)}`;

/** The head of a `status` call with a JSON body of `length` bytes. */
const callHead = (length: number, more = '') =>
  `${STATUS_LINE}Content-Type: application/json\r\nContent-Length: ${length}\r\n${more}\r\n`;

let database: TestDatabase;
let cloud: TestCloud;
let company: { org_id: number; secret: string };
let code: string;
let port: number;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, httpTimeouts: TIMEOUTS });
  port = Number(new URL(cloud.baseUrl).port);
  company = await secretCompany(cloud, 'Slow Clients Ltd');
  code = (await cloud.call('request', { ...company })).body.code as string;
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

function expectTimedOut(responses: RawResponse[]): void {
  expect(responses.map((response) => response.status)).toEqual([408]);
  const body = JSON.parse(responses[0]!.body) as Record<string, unknown>;
  expect(body.error).toBe('request_timeout');
  expect(body.message).toBeTypeOf('string');
  expect(responses[0]!.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}

/** A real `status` call through the network, as a company's client makes it: its status and state. */
async function realStatus(): Promise<string> {
  const response = await fetch(`${cloud.baseUrl}/api/company.php?a=status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...company, code }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  return `${response.status} ${String(body.state)}`;
}

describe('[attack:http.slow-client] slow HTTP clients', () => {
  it('a client sending its headers a byte at a time is cut off with 408 request_timeout', async () => {
    const client = await trickle(port, { slowly: HEADER_NEVER_DONE }, BYTE_INTERVAL_MS);
    const { responses, closed } = await client.exchange;
    expect(closed).toBe(true);
    expectTimedOut(responses);
  });

  it('a client sending its body a byte at a time is cut off with 408 request_timeout', async () => {
    const body = JSON.stringify({ ...company, code, padding: 'x'.repeat(10_000) });
    const head = callHead(body.length);
    const client = await trickle(port, { atOnce: head, slowly: body }, BYTE_INTERVAL_MS);
    const { responses, closed } = await client.exchange;
    expect(closed).toBe(true);
    expectTimedOut(responses);
  });

  it('a connection that never sends a byte is closed', async () => {
    const client = await trickle(port, { slowly: '' }, BYTE_INTERVAL_MS);
    const { closed } = await client.exchange;
    expect(closed).toBe(true);
  });

  it('an idle connection between calls is closed', async () => {
    const socket = await open(port);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closing = new Promise((resolve) => socket.once('close', resolve));
    const payload = JSON.stringify({ ...company, code });
    socket.write(`${callHead(payload.length)}${payload}`);
    await closing;
    const { responses } = parseResponses(Buffer.concat(received));
    expect(responses.map((response) => response.status)).toEqual([200]);
    expect(responses[0]!.headers.connection).toBe('keep-alive');
  });

  it(`while ${SLOW_CLIENTS} slow clients hold connections, real calls are answered`, async () => {
    const slow = await Promise.all(
      Array.from({ length: SLOW_CLIENTS }, () =>
        trickle(port, { slowly: HEADER_NEVER_DONE }, BYTE_INTERVAL_MS),
      ),
    );
    const answered: string[] = [];
    // Every call starts while slow clients still hold their connections.
    while (slow.some((client) => client.isOpen())) answered.push(await realStatus());
    const exchanges = await Promise.all(slow.map((client) => client.exchange));

    expect(answered.length).toBeGreaterThan(0);
    expect(answered.filter((answer) => answer !== '200 new')).toEqual([]);
    for (const { responses, closed } of exchanges) {
      expect(closed).toBe(true);
      expectTimedOut(responses);
    }
    expect(await realStatus()).toBe('200 new');
  });
});

describe('a cloud that stops', () => {
  it('does not wait for a connection that never sent a byte, and ends it', async () => {
    // The default timeouts: Node would hold such a connection until its keep-alive timeout, over a minute.
    const own = await createTestDatabase();
    const stopping = await startTestCloud({ database: own });
    const socket = await open(Number(new URL(stopping.baseUrl).port));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await stopping.stop();
    await closed;
    await own.close();
    expect(socket.destroyed).toBe(true);
  });
});

describe('calls at the speed of a client', () => {
  it('a call sent at once is not cut off', async () => {
    const payload = JSON.stringify({ ...company, code });
    const { responses } = await sendRaw(
      port,
      `${callHead(payload.length, 'Connection: close\r\n')}${payload}`,
    );
    expect(responses.map((response) => response.status)).toEqual([200]);
  });
});
