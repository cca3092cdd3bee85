import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The operator API and the provisioning endpoint answer bad input with a clear 4xx in the common error
 * shape, never a 500 or a stack trace, like the company API.
 */
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

const ODD_BODIES: [string, string][] = [
  ['not JSON', '{"name":'],
  ['a JSON array', '[1,2]'],
  ['null', 'null'],
  ['a number', '42'],
  ['wrong types', '{"name":5,"domain":true,"label":[],"display_name":{}}'],
  [
    'huge strings',
    JSON.stringify({ name: 'x'.repeat(5000), label: 'y'.repeat(5000), domain: 'z'.repeat(300) }),
  ],
  ['an IP literal as domain', '{"name":"A","domain":"127.0.0.1"}'],
  ['a bad domain', '{"name":"A","domain":"exa mple..com"}'],
  ['a prototype key', '{"__proto__":{"admin":true},"name":"P"}'],
];

const ROUTES: [string, string][] = [
  ['POST', '/ops/companies'],
  ['POST', '/ops/devices'],
  ['POST', '/ops/customers'],
  ['POST', '/api/device/provision'],
];

const ID_ROUTES = ['approve', 'suspend', 'secret', 'confirm-key'];
const ODD_IDS = ['0', '-1', 'abc', '1.5', '99999999999', '2147483648', '%00'];

describe.each(ROUTES)('%s %s', (method, url) => {
  it.each(ODD_BODIES)('answers %s with a 4xx error body', async (_label, payload) => {
    const response = await cloud.app.inject({
      method: method as 'POST',
      url,
      payload,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cloud.operatorToken}` },
    });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    const body = response.json() as { error: string; message: string };
    expect(body.error).toMatch(/^[a-z_]+$/);
    expect(body.message).not.toMatch(/at .+\.(ts|js):\d+/);
  });
});

describe('operator routes with odd ids', () => {
  it.each(ID_ROUTES.flatMap((action) => ODD_IDS.map((id) => [action, id] as const)))(
    'POST /ops/companies/%s with id %s answers 4xx',
    async (action, id) => {
      const answer = await cloud.ops('POST', `/ops/companies/${id}/${action}`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    },
  );

  it('journal with odd query values answers 4xx', async () => {
    for (const query of ['limit=0', 'limit=abc', 'company=-1', 'before=1e99', 'limit=100000']) {
      const answer = await cloud.ops('GET', `/ops/journal?${query}`);
      expect(answer.status, query).toBe(400);
    }
  });
});
