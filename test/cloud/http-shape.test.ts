import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ERRORS, type ErrorCode } from '../../shared/errors.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { open, parseResponses, type RawResponse, sendRaw } from '../support/raw-http.js';

/** The HTTP shape of the company API (docs/design.md section 1): what a caller sees whatever it sends. */

let database: TestDatabase;
let cloud: TestCloud;
let company: { org_id: number; secret: string };

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  company = await secretCompany(cloud, 'Shape Test Ltd');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/** A POST with exactly these bytes and headers, for what `cloud.call` cannot send. */
async function post(url: string, payload: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await cloud.app.inject({ method: 'POST', url, payload, headers });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.body);
  } catch {
    body = { raw: response.body };
  }
  return { status: response.statusCode, body, headers: response.headers };
}

const JSON_TYPE = { 'content-type': 'application/json' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const port = () => Number(new URL(cloud.baseUrl).port);

/** An error read from a socket: the contract's body, its status and a fresh request id. */
function expectRawError(response: RawResponse, status: number, code: string): void {
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect({ status: response.status, error: body.error }).toEqual({ status, error: code });
  expect(ERRORS[code as ErrorCode].status).toBe(status);
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.message).toBeTypeOf('string');
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['x-request-id']).toMatch(UUID);
}

/** Every error answer: the code, a readable sentence, and the request id header. */
function expectError(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error: code });
  expect(typeof answer.body.message).toBe('string');
  expect((answer.body.message as string).length).toBeGreaterThan(0);
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}

describe('the action', () => {
  it('an unknown a answers 400 unknown_action', async () => {
    expectError(await cloud.call('delete', { ...company }), 400, 'unknown_action');
  });

  it('a missing a answers 400 unknown_action', async () => {
    expectError(await post('/api/company.php', JSON.stringify(company), JSON_TYPE), 400, 'unknown_action');
  });

  it('a repeated a answers 400 unknown_action', async () => {
    expectError(
      await post('/api/company.php?a=request&a=status', JSON.stringify(company), JSON_TYPE),
      400,
      'unknown_action',
    );
  });

  it('the action is matched exactly (a=REQUEST is unknown)', async () => {
    expectError(await cloud.call('REQUEST', { ...company }), 400, 'unknown_action');
  });
});

describe('the body', () => {
  it('text that is not JSON answers 400 bad_json', async () => {
    expectError(await cloud.call('request', 'this is not json'), 400, 'bad_json');
  });

  it('a JSON array answers 400 bad_json', async () => {
    expectError(await cloud.call('request', JSON.stringify([company])), 400, 'bad_json');
  });

  it.each(['null', '42', '"text"', 'true'])('the JSON value %s answers 400 bad_json', async (payload) => {
    expectError(await cloud.call('request', payload), 400, 'bad_json');
  });

  it('invalid UTF-8 answers 400 bad_json', async () => {
    const json = Buffer.from(JSON.stringify({ ...company, ref: 'XX' }));
    const at = json.indexOf('XX');
    json[at] = 0xff;
    json[at + 1] = 0xfe;
    expectError(await post('/api/company.php?a=request', json, JSON_TYPE), 400, 'bad_json');
  });

  it('an empty body answers 400 bad_json', async () => {
    expectError(await cloud.call('request', ''), 400, 'bad_json');
  });

  it('[attack:http.oversized-body] a body over 16 KiB answers 413 too_large', async () => {
    const payload = JSON.stringify({ ...company, padding: 'x'.repeat(16 * 1024) });
    expectError(await cloud.call('request', payload), 413, 'too_large');
  });

  it('a body just under 16 KiB is read', async () => {
    const base = JSON.stringify({ ...company, padding: '' });
    const payload = JSON.stringify({ ...company, padding: 'x'.repeat(16 * 1024 - base.length) });
    expect(Buffer.byteLength(payload)).toBe(16 * 1024);
    const answer = await cloud.call('request', payload);
    expect(answer.status).toBe(200);
  });
});

describe('the content type', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('%s answers 415 unsupported_media_type', async (_label, type) => {
    expectError(
      await post('/api/company.php?a=request', JSON.stringify(company), { 'content-type': type }),
      415,
      'unsupported_media_type',
    );
  });

  it('application/json with a charset is accepted', async () => {
    const answer = await post('/api/company.php?a=request', JSON.stringify(company), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(answer.status).toBe(200);
  });
});

describe('fields of the wrong type or out of range answer 400 invalid_field naming the field', () => {
  const cases: { name: string; action: string; body: () => Record<string, unknown>; field: string }[] = [
    {
      name: 'org_id as a string',
      action: 'request',
      body: () => ({ ...company, org_id: String(company.org_id) }),
      field: 'org_id',
    },
    { name: 'org_id of 0', action: 'request', body: () => ({ ...company, org_id: 0 }), field: 'org_id' },
    {
      name: 'org_id beyond the integer range',
      action: 'status',
      body: () => ({ ...company, org_id: 2 ** 31 }),
      field: 'org_id',
    },
    {
      name: 'secret as a number',
      action: 'request',
      body: () => ({ ...company, secret: 12345 }),
      field: 'secret',
    },
    {
      name: 'ttl_hours as a string',
      action: 'request',
      body: () => ({ ...company, ttl_hours: '24' }),
      field: 'ttl_hours',
    },
    {
      name: 'ttl_hours of 721',
      action: 'request',
      body: () => ({ ...company, ttl_hours: 721 }),
      field: 'ttl_hours',
    },
    { name: 'ref as a number', action: 'request', body: () => ({ ...company, ref: 17 }), field: 'ref' },
    {
      name: 'code as a number',
      action: 'status',
      body: () => ({ ...company, code: 123456789012 }),
      field: 'code',
    },
    { name: 'code missing', action: 'status', body: () => ({ ...company }), field: 'code' },
    {
      name: 'key_ref as a string',
      action: 'open',
      body: () => ({ ...company, key_ref: '1', number_id: 1, actor: 'Anna' }),
      field: 'key_ref',
    },
    {
      name: 'number_id negative',
      action: 'open',
      body: () => ({ ...company, key_ref: 1, number_id: -1, actor: 'Anna' }),
      field: 'number_id',
    },
    {
      name: 'key_ref beyond the integer range',
      action: 'open',
      body: () => ({ ...company, key_ref: 2 ** 40, number_id: 1, actor: 'Anna' }),
      field: 'key_ref',
    },
    {
      name: 'actor as a number',
      action: 'open',
      body: () => ({ ...company, key_ref: 1, number_id: 1, actor: 42 }),
      field: 'actor',
    },
  ];

  it.each(cases)('$name', async ({ action, body, field }) => {
    const answer = await cloud.call(action, body());
    expectError(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe(field);
  });
});

describe('every answer', () => {
  it('[attack:http.request-id-injection] carries a fresh X-Request-Id, and never the one the client sent', async () => {
    const first = await cloud.call('request', { ...company }, { 'x-request-id': 'client-chosen' });
    const second = await cloud.call('status', { ...company, code: 'unknown' });
    expect(first.status).toBe(200);
    expect(first.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });

  it('an unknown path answers 404 in the same error shape', async () => {
    const answer = await post('/api/other.php', '{}', JSON_TYPE);
    expectError(answer, 404, 'not_found');
  });

  it('an operator id beyond the integer range answers 400 invalid_field', async () => {
    const answer = await cloud.ops('GET', '/ops/companies/2147483648');
    expectError(answer, 400, 'invalid_field');
    expect(answer.body.field).toBe('id');
  });
});

describe('the method', () => {
  it('POST reaches the API beside the route that refuses other methods', async () => {
    expect((await cloud.call('request', { ...company })).status).toBe(200);
  });
});

describe('while the cloud stops', () => {
  it('a call that arrives on an open connection is answered in the contract, not with a bare 503', async () => {
    const stopping = await startTestCloud({ database });
    const socket = await open(Number(new URL(stopping.baseUrl).port));
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const payload = JSON.stringify({ ...company, code: 'AAAAAAAAAAAA' });
    // The headers begin before the stop and end after it, so the call is routed while the server closes.
    socket.write('POST /api/company.php?a=status HTTP/1.1\r\nHost: localhost\r\n');
    const closing = stopping.app.close();
    socket.write(`Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n${payload}`);
    await closed;
    await closing;
    await stopping.stop();
    const { responses } = parseResponses(Buffer.concat(received));
    expect(responses.map((response) => response.status)).toEqual([404]);
    expectRawError(responses[0]!, 404, 'not_found');
  });
});

describe('[attack:http.wrong-method] another method than POST on the company API', () => {
  it.each(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'] as const)(
    '%s answers 405 method_not_allowed with Allow: POST, saying to use POST',
    async (method) => {
      const response = await cloud.app.inject({
        method,
        url: '/api/company.php?a=status',
        headers: JSON_TYPE,
        ...(method === 'GET' || method === 'TRACE' ? {} : { payload: JSON.stringify(company) }),
      });
      const answer = {
        status: response.statusCode,
        body: JSON.parse(response.body),
        headers: response.headers,
      };
      expectError(answer, 405, 'method_not_allowed');
      expect(answer.headers.allow).toBe('POST');
      expect(answer.body.message).toContain('POST');
    },
  );

  it('HEAD answers 405 with Allow: POST, headers only', async () => {
    const response = await cloud.app.inject({ method: 'HEAD', url: '/api/company.php?a=status' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.headers['x-request-id']).toMatch(UUID);
    expect(response.body).toBe('');
  });

  it('CONNECT, which Node would drop without an answer, answers 405 in the error contract', async () => {
    const { responses, closed } = await sendRaw(
      port(),
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    expect(responses).toHaveLength(1);
    expectRawError(responses[0]!, 405, 'method_not_allowed');
    expect(responses[0]!.headers.allow).toBe('POST');
    expect(closed).toBe(true);
  });
});

describe("[attack:http.parser-error] requests Node's parser refuses are answered in the error contract", () => {
  const call = (headers: string, body = '{}') =>
    `POST /api/company.php?a=status HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;
  const cases: { name: string; bytes: string; status: number; code: string }[] = [
    {
      name: 'a control character in a header value',
      bytes: call('X-Note: a\u0001b\r\nContent-Length: 2\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a header name with a space',
      bytes: call('Bad Name: x\r\nContent-Length: 2\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a malformed request line',
      bytes: 'POST /api/company.php?a=status HTTP/9\r\nHost: localhost\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'an unknown method token',
      bytes: 'P@ST /api/company.php HTTP/1.1\r\nHost: localhost\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'both Content-Length and Transfer-Encoding',
      bytes: call('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a chunk size that is not hexadecimal',
      bytes: call('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a Content-Length that is not a number',
      bytes: call('Content-Length: two\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'headers over 16 KiB',
      bytes: call(`X-Padding: ${'x'.repeat(17 * 1024)}\r\nContent-Length: 2\r\n`),
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'a body shorter than its Content-Length, then the end of the stream',
      bytes: call('Content-Length: 40\r\n'),
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'no Host header in HTTP/1.1',
      bytes:
        'POST /api/company.php?a=status HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a URL that is not valid percent-encoding',
      bytes: 'POST /api/company.php%zz?a=status HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
  ];

  it.each(cases)('$name: $status $code with X-Request-Id', async ({ bytes, status, code }) => {
    const { responses, closed } = await sendRaw(port(), Buffer.from(bytes, 'latin1'));
    expect(responses).toHaveLength(1);
    expectRawError(responses[0]!, status, code);
    expect(closed).toBe(true);
  });

  it('the refusal is logged with its request id and the parser code, and no stack', async () => {
    const info = vi.spyOn(cloud.app.log, 'info');
    try {
      const { responses } = await sendRaw(port(), Buffer.from(cases[0]!.bytes, 'latin1'));
      const requestId = responses[0]!.headers['x-request-id'];
      const logged = info.mock.calls.find(([fields]) => (fields as { reqId?: string }).reqId === requestId);
      expect(logged?.[0]).toEqual({ reqId: requestId, code: 'HPE_INVALID_HEADER_TOKEN' });
    } finally {
      info.mockRestore();
    }
  });

  it('a valid call followed by bytes the parser refuses gets its own answer first', async () => {
    const valid = JSON.stringify({ ...company, code: 'AAAAAAAAAAAA' });
    const bytes = `${call(`Content-Length: ${valid.length}\r\n`, valid)}GARBAGE\r\n\r\n`;
    const { responses } = await sendRaw(port(), bytes);
    expect(responses.map((response) => response.status)).toEqual([404, 400]);
    expect(JSON.parse(responses[0]!.body).error).toBe('not_found');
    expectRawError(responses[1]!, 400, 'bad_request');
  });
});

describe('[attack:http.odd-input] odd inputs never give a 500', () => {
  const huge = '1'.repeat(400);
  const deep = `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`;
  const payloads: { name: string; body: (auth: Record<string, unknown>) => string }[] = [
    { name: 'empty body', body: () => '' },
    { name: 'whitespace', body: () => '   \n ' },
    {
      name: 'all nulls',
      body: () => JSON.stringify({ org_id: null, secret: null, code: null, ttl_hours: null }),
    },
    {
      name: 'nulls with credentials',
      body: (a) =>
        JSON.stringify({
          ...a,
          ref: null,
          ttl_hours: null,
          code: null,
          key_ref: null,
          number_id: null,
          actor: null,
        }),
    },
    {
      name: 'huge numbers',
      body: (a) =>
        `{"org_id":${a.org_id},"secret":${JSON.stringify(a.secret)},"ttl_hours":${huge},"key_ref":${huge},"number_id":1e308,"actor":"x"}`,
    },
    { name: 'huge org_id', body: (a) => `{"org_id":${huge},"secret":${JSON.stringify(a.secret)}}` },
    { name: 'org_id beyond the integer range', body: (a) => JSON.stringify({ ...a, org_id: 2 ** 40 }) },
    {
      name: 'number_id beyond the integer range',
      body: (a) => JSON.stringify({ ...a, key_ref: 1, number_id: 2 ** 31, actor: 'x' }),
    },
    {
      name: 'negative zero and fractions',
      body: (a) => JSON.stringify({ ...a, ttl_hours: -0, key_ref: 0.5, number_id: -0, actor: 'x' }),
    },
    {
      name: 'nested objects',
      body: (a) =>
        JSON.stringify({
          ...a,
          ref: { a: { b: [1, 2, { c: null }] } },
          code: { x: 1 },
          key_ref: { id: 1 },
          number_id: [1],
          actor: { name: 'x' },
        }),
    },
    {
      name: 'deeply nested JSON',
      body: (a) => `{"org_id":${a.org_id},"secret":${JSON.stringify(a.secret)},"ref":${deep}}`,
    },
    {
      name: 'nested credentials',
      body: (a) => JSON.stringify({ org_id: { id: a.org_id }, secret: [a.secret] }),
    },
    {
      name: 'unicode everywhere',
      body: (a) =>
        JSON.stringify({
          ...a,
          ref: 'Zürich 🚧 東京 \u202e',
          code: 'ÄÖÜ𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
          actor: 'Jürgen 🚪',
          key_ref: 1,
          number_id: 1,
        }),
    },
    {
      name: 'lone surrogates',
      body: (a) =>
        `{"org_id":${a.org_id},"secret":${JSON.stringify(a.secret)},"ref":"\\ud800","code":"\\udfff","actor":"\\ud800"}`,
    },
    {
      name: 'NUL characters',
      body: (a) =>
        JSON.stringify({ ...a, ref: 'a\u0000b', code: '\u0000', actor: '\u0000', key_ref: 1, number_id: 1 }),
    },
    {
      name: '__proto__',
      body: (a) =>
        `{"org_id":${a.org_id},"secret":${JSON.stringify(a.secret)},"__proto__":{"ttl_hours":5,"admin":true},"constructor":{"prototype":{"x":1}}}`,
    },
    { name: '__proto__ without credentials', body: () => '{"__proto__":{"org_id":1,"secret":"glsk_x"}}' },
    {
      name: 'very long strings',
      body: (a) =>
        JSON.stringify({
          ...a,
          ref: 'r'.repeat(5000),
          code: 'c'.repeat(5000),
          actor: 'a'.repeat(5000),
          key_ref: 1,
          number_id: 1,
        }),
    },
    {
      name: 'a very long secret',
      body: (a) => JSON.stringify({ org_id: a.org_id, secret: 's'.repeat(10_000) }),
    },
    {
      name: 'duplicate keys',
      body: (a) => `{"org_id":${a.org_id},"org_id":"x","secret":${JSON.stringify(a.secret)}}`,
    },
    {
      name: 'booleans',
      body: (a) =>
        JSON.stringify({ ...a, ttl_hours: true, code: false, key_ref: true, number_id: false, actor: true }),
    },
    { name: 'truncated JSON', body: (a) => JSON.stringify(a).slice(0, -3) },
    { name: 'a BOM before the JSON', body: (a) => `\ufeff${JSON.stringify(a)}` },
  ];

  for (const action of ['request', 'status', 'open', 'bogus']) {
    it.each(payloads)(`a=${action}: $name`, async ({ body }) => {
      const answer = await cloud.call(action, body({ ...company }));
      expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
      expect(answer.headers['x-request-id']).toBeDefined();
      if (answer.status >= 400) {
        expect(typeof answer.body.error).toBe('string');
        expect(typeof answer.body.message).toBe('string');
      }
    });
  }

  it('[attack:http.odd-input] odd signature headers never give a 500', async () => {
    const headerSets: Record<string, string>[] = [
      { 'x-service-org': '' },
      { 'x-service-org': 'a.example', 'x-service-ts': '', 'x-service-nonce': '', 'x-service-sig': '' },
      {
        'x-service-org': 'a.example',
        'x-service-ts': '9'.repeat(400),
        'x-service-nonce': '0'.repeat(32),
        'x-service-sig': 'A'.repeat(86),
      },
      {
        'x-service-org': '.'.repeat(300),
        'x-service-ts': '-1',
        'x-service-nonce': 'g'.repeat(32),
        'x-service-sig': '====',
      },
      {
        'x-service-org': 'a.example',
        'x-service-ts': '1',
        'x-service-nonce': '0'.repeat(32),
        'x-service-sig': 'A'.repeat(88),
      },
    ];
    for (const headers of headerSets) {
      const answer = await cloud.call('request', '{}', headers);
      expect(answer.status, JSON.stringify({ headers, body: answer.body })).toBe(401);
      expect(answer.body.error).toBeTypeOf('string');
    }
  });
});

describe('documentation', () => {
  it('every error code in shared/errors.ts is documented in cloud/README.md', () => {
    const readme = new URL('../../cloud/README.md', import.meta.url);
    expect(existsSync(readme), 'cloud/README.md does not exist yet').toBe(true);
    const text = readFileSync(readme, 'utf8');
    const missing = Object.keys(ERRORS).filter((code) => !text.includes(`\`${code}\``));
    expect(missing, `codes missing from cloud/README.md: ${missing.join(', ')}`).toEqual([]);
  });
});

describe('[attack:fuzz.company-api] what fuzzing the company API found', () => {
  const send = (headers: string, body: string) =>
    sendRaw(
      port(),
      `POST /api/company.php?a=request HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`,
    );

  it('an Expect other than 100-continue is ignored: the call is answered in the contract, not with a bare 417', async () => {
    const { responses } = await send('Expect: something-else\r\n', JSON.stringify(company));
    expect(responses.map((response) => response.status)).toEqual([200]);
    expect(responses[0]!.headers['x-request-id']).toMatch(UUID);
  });
});
