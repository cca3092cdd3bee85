import { validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { ACTION_ERRORS } from '../../cloud/faces/api-contract/action-errors.js';
import {
  ACTION_SCHEMAS,
  actionPath,
  eventSchemaName,
  mediaOf,
  type OpenApiDocument,
  openApiDocument,
} from '../../cloud/faces/api-contract/openapi-document.js';
import { ACTIONS } from '../../shared/company-api/calls.js';
import { EVENT_KINDS, eventSchema } from '../../shared/company-api/events.js';
import { SIGNATURE_HEADERS } from '../../shared/crypto/request-signing.js';
import { WEBHOOK_HEADERS } from '../../shared/crypto/webhook-signing.js';
import { ERRORS, type ErrorCode } from '../../shared/errors.js';
import { DocumentValidator } from './document-validator.js';

/**
 * The OpenAPI document of the company API (docs/design.md section 1.1) as a standard tool reads it: valid
 * OpenAPI 3.1 by the official schema, every refusal it lists is the error table's with the same status and
 * message, and every example it shows is valid by its own schemas.
 */
const BASE_URL = 'https://gatelink.example';
const document = openApiDocument(BASE_URL);

/** The official OpenAPI 3.1 schema check of @readme/openapi-parser, on a copy (it dereferences in place). */
async function officialCheck(
  candidate: unknown,
): Promise<{ valid: boolean; errors?: { message: string }[] }> {
  return validate(structuredClone(candidate) as Parameters<typeof validate>[0]);
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 by the official schema', async () => {
    const result = await officialCheck(document);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('and the check refuses a document that breaks the schema', async () => {
    const broken = structuredClone(document) as unknown as { paths: Record<string, { post: object }> };
    broken.paths[actionPath('status')]!.post = { responses: 'none' };
    expect((await officialCheck(broken)).valid).toBe(false);
  });

  it('names the cloud at BASE_URL as its server, and each action as its own path', () => {
    expect(document.servers.map((server) => server.url)).toEqual([BASE_URL]);
    expect(Object.keys(document.paths)).toEqual(ACTIONS.map((action) => `/api/company.php?a=${action}`));
    for (const action of ACTIONS) {
      expect(document.paths[actionPath(action)]!.post.operationId).toBe(action);
    }
  });

  it('lists for each action exactly its refusals, each under its status with its message from shared/errors.ts', () => {
    for (const action of ACTIONS) {
      const { responses } = document.paths[actionPath(action)]!.post;
      const listed: ErrorCode[] = [];
      for (const [status, response] of Object.entries(responses)) {
        if (status === '200') continue;
        const schema = mediaOf(response).schema;
        const codes = (schema.properties!.error as { enum: ErrorCode[] }).enum;
        const examples = mediaOf(response).examples;
        expect(Object.keys(examples), `${action} ${status}`).toEqual(codes);
        for (const code of codes) {
          expect(code in ERRORS, `${code} is in shared/errors.ts`).toBe(true);
          expect(ERRORS[code].status, `${action}: ${code}`).toBe(Number(status));
          expect(examples[code]!.value).toMatchObject({ error: code, message: ERRORS[code].message });
          expect(examples[code]!.summary).toBe(ERRORS[code].message);
          expect(response.description).toContain(`\`${code}\`: ${ERRORS[code].message}`);
        }
        listed.push(...codes);
      }
      expect([...listed].sort()).toEqual([...ACTION_ERRORS[action]].sort());
    }
  });

  it('lists the refusals a company meets: opening only for open, not_found only for status', () => {
    const codes = (action: (typeof ACTIONS)[number]) => new Set(ACTION_ERRORS[action]);
    expect(codes('open').has('device_offline') && codes('open').has('rate_limit')).toBe(true);
    expect(codes('status').has('device_offline')).toBe(false);
    expect(codes('status').has('not_found')).toBe(true);
    for (const action of ACTIONS) {
      expect(codes(action).has('bad_secret') && codes(action).has('bad_signature')).toBe(true);
      expect(codes(action).has('unauthorized'), 'the operator API is not the company API').toBe(false);
    }
  });

  it('has the signature as four header schemes required together, and secret mode as the empty requirement', () => {
    const schemes = document.components.securitySchemes;
    expect(Object.values(schemes).map((scheme) => scheme.name.toLowerCase())).toEqual(
      Object.values(SIGNATURE_HEADERS),
    );
    for (const action of ACTIONS) {
      const { security } = document.paths[actionPath(action)]!.post;
      expect(security).toEqual([Object.fromEntries(Object.keys(schemes).map((name) => [name, []])), {}]);
    }
    const credentials = document.components.schemas.SecretCredentials!;
    expect(Object.keys(credentials.properties ?? {})).toEqual(['org_id', 'secret']);
  });

  it('takes Idempotency-Key on request and open only, and every answer names X-Request-Id', () => {
    const takesKey = (action: (typeof ACTIONS)[number]) =>
      document.paths[actionPath(action)]!.post.parameters.some(
        (parameter) => parameter.$ref === '#/components/parameters/IdempotencyKey',
      );
    expect(ACTIONS.filter(takesKey)).toEqual(['request', 'open']);
    for (const action of ACTIONS) {
      for (const response of Object.values(document.paths[actionPath(action)]!.post.responses)) {
        expect(response.headers['X-Request-Id']).toEqual({ $ref: '#/components/headers/XRequestId' });
      }
    }
    const open = document.paths[actionPath('open')]!.post;
    expect(open.responses['429']!.headers['Retry-After']).toBeDefined();
  });

  it("carries each field's limits from its zod schema", () => {
    const schemas = document.components.schemas;
    expect(schemas.RequestBody!.properties).toMatchObject({
      ref: { type: 'string', minLength: 1, maxLength: 64 },
      ttl_hours: { type: 'integer', minimum: 1, maximum: 720, default: 24 },
    });
    expect(schemas.OpenBody!.required).toEqual(['key_ref', 'number_id', 'actor']);
    expect(schemas.OpenBody!.properties).toMatchObject({
      key_ref: { type: 'integer', exclusiveMinimum: 0, maximum: 2_147_483_647 },
      actor: { type: 'string', maxLength: 128 },
    });
    expect(schemas.StatusAnswer!.properties!.state).toMatchObject({
      enum: ['new', 'claimed', 'issued', 'revoked', 'expired', 'declined'],
    });
    expect(schemas.StatusAnswer!.properties!.declined_at).toMatchObject({ type: 'string' });
    expect(schemas.StatusAnswer!.required).not.toContain('declined_at');
  });

  it('shows examples that its own schemas and the zod schemas accept', () => {
    const validator = new DocumentValidator(document);
    for (const action of ACTIONS) {
      const { body, answer, bodyName } = ACTION_SCHEMAS[action];
      const operation = document.paths[actionPath(action)]!.post;
      const bodies = Object.values(operation.requestBody.content['application/json'].examples);
      expect(bodies.length).toBeGreaterThan(0);
      for (const example of bodies) {
        expect(validator.component(bodyName)(example.value), `${action} body example`).toBe(true);
        expect(validator.component('SecretCredentials')(example.value)).toBe(true);
        expect(body.safeParse(example.value).success).toBe(true);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const examples = Object.values(mediaOf(response).examples);
        expect(examples.length, `${action} ${status} has examples`).toBeGreaterThan(0);
        const check = validator.answer(action, Number(status))!;
        for (const example of examples) {
          expect(check(example.value), `${action} ${status}: ${JSON.stringify(check.errors)}`).toBe(true);
          if (status === '200') expect(answer.safeParse(example.value).success).toBe(true);
        }
      }
    }
  });

  it('has every event kind in `webhooks`: a POST of its body, with the Standard Webhooks headers and a 2xx', () => {
    expect(Object.keys(document.webhooks)).toEqual([...EVENT_KINDS]);
    const headers = document.components.parameters;
    for (const kind of EVENT_KINDS) {
      const { post } = document.webhooks[kind];
      const named = post.parameters.map((parameter) => {
        const found = headers[parameter.$ref.replace('#/components/parameters/', '')]!;
        return [found.name, found.in, found.required];
      });
      expect(named).toEqual(Object.values(WEBHOOK_HEADERS).map((name) => [name, 'header', true]));
      expect(post.description).toContain('2xx status within 10 s');
      expect(Object.keys(post.responses)).toEqual(['2XX']);
      const schema = document.components.schemas[eventSchemaName(kind)]!;
      expect(post.requestBody.content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${eventSchemaName(kind)}`,
      });
      expect(schema.properties!.type).toMatchObject({ const: kind });
      expect(schema.required).toEqual(['type', 'id', 'at', 'data']);
    }
    expect(headers.WebhookSignature!.description).toContain('v1a,');
    const declined = document.components.schemas[eventSchemaName('request.declined')]!;
    expect(declined.properties!.data).toMatchObject({
      properties: { state: { const: 'declined' }, declined_at: { type: 'string' } },
      required: ['code', 'ref', 'state', 'declined_at'],
    });
  });

  it("shows for every event kind an example its own schema and the zod schema accept, and no other kind's", () => {
    const validator = new DocumentValidator(document);
    for (const kind of EVENT_KINDS) {
      const examples = Object.values(
        document.webhooks[kind].post.requestBody.content['application/json'].examples,
      );
      expect(examples.length, kind).toBeGreaterThan(0);
      for (const example of examples) {
        const check = validator.component(eventSchemaName(kind));
        expect(check(example.value), `${kind}: ${JSON.stringify(check.errors)}`).toBe(true);
        expect(eventSchema(kind).safeParse(example.value).success, kind).toBe(true);
        const other = EVENT_KINDS.find((candidate) => candidate !== kind)!;
        expect(validator.component(eventSchemaName(other))(example.value), `${kind} as ${other}`).toBe(false);
      }
    }
  });

  it('is a pure function of the base URL', () => {
    const other: OpenApiDocument = openApiDocument('http://localhost:8080');
    expect(other.servers[0]!.url).toBe('http://localhost:8080');
    expect({ ...other, servers: document.servers }).toEqual(document);
  });
});
