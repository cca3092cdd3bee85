import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient from 'openapi-fetch';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../shared/errors.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import type { SecretAuth } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import type { paths } from './generated/company-api.js';

/**
 * A company that knows nothing of Gatelink but its OpenAPI document (docs/design.md section 1.1): types made by
 * openapi-typescript from the served /api/openapi.json, and openapi-fetch as the client, call the API over
 * HTTP in secret mode and read the answers. The types are kept in test/api-contract/generated/ so that this
 * file is type-checked against them; the test makes them again from the served document and they must be the
 * same (`UPDATE_OPENAPI_TYPES=1` writes them anew after a change of the contract).
 */
const GENERATED = join(import.meta.dirname, 'generated', 'company-api.ts');
const HEADER = `/**
 * Made by openapi-typescript from GET /api/openapi.json: do not edit. test/api-contract/generic-client.test.ts
 * makes it again and compares (UPDATE_OPENAPI_TYPES=1 to write it anew).
 */
`;

let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  company = await secretCompany(cloud, 'Generic Tools Ltd');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

describe('a client generated from the served document', () => {
  it('has the types openapi-typescript makes from /api/openapi.json', async () => {
    const served = await fetch(`${cloud.baseUrl}/api/openapi.json`);
    expect(served.status).toBe(200);
    const types = HEADER + astToString(await openapiTS((await served.json()) as OpenAPI3));
    if (process.env.UPDATE_OPENAPI_TYPES === '1') writeFileSync(GENERATED, types);
    expect(types).toBe(readFileSync(GENERATED, 'utf8'));
  });

  it('makes a request in secret mode and reads its status, and is told not_found for an unknown code', async () => {
    const client = createClient<paths>({ baseUrl: cloud.baseUrl });
    const created = await client.POST('/api/company.php?a=request', {
      body: { ...company, ref: 'ORD-77', ttl_hours: 12 },
    });
    expect(created.error).toBeUndefined();
    expect(created.response.status).toBe(200);
    const code = created.data!.code;
    expect(code).toMatch(/^[0-9A-Z]{12}$/);

    const status = await client.POST('/api/company.php?a=status', { body: { ...company, code } });
    expect(status.error).toBeUndefined();
    expect(status.data).toEqual({
      code,
      state: 'new',
      expires_at: created.data!.expires_at,
      ref: 'ORD-77',
    });
    expect(status.response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const unknown = await client.POST('/api/company.php?a=status', {
      body: { ...company, code: 'ZZZZZZZZZZZZ' },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.data).toBeUndefined();
    // The generated type of `error` is the codes the document lists, every one of them an ErrorCode.
    const refusal: ErrorCode | undefined = unknown.error?.error;
    expect(refusal).toBe('not_found');
  });
});
