import { type core, z } from 'zod';
import {
  ACTIONS,
  type Action,
  errorAnswerSchema,
  openAnswerSchema,
  openBodySchema,
  requestAnswerSchema,
  requestBodySchema,
  secretCredentialsSchema,
  statusAnswerSchema,
  statusBodySchema,
} from '../../../shared/company-api/calls.js';
import {
  listenBodySchema,
  listenMessageSchema,
  triggerAnswerSchema,
  triggerBodySchema,
} from '../../../shared/company-api/event-calls.js';
import {
  EVENT_EXAMPLES,
  EVENT_KINDS,
  type EventKind,
  eventSchema,
} from '../../../shared/company-api/events.js';
import { sandboxAnswerSchema, sandboxBodySchema } from '../../../shared/company-api/sandbox-calls.js';
import { SIGNATURE_HEADERS } from '../../../shared/crypto/request-signing.js';
import {
  WEBHOOK_HEADERS,
  WEBHOOK_HMAC_VERSION,
  WEBHOOK_SIGNATURE_VERSION,
} from '../../../shared/crypto/webhook-signing.js';
import { ERRORS, type ErrorCode } from '../../../shared/errors.js';
import { BODY_LIMIT_BYTES, say, TIMESTAMP_TOLERANCE_SECONDS } from '../../../shared/limits.js';
import { DEFAULT_DELIVERY } from '../../links/event-delivery/delivery-worker.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../rules/idempotency/idempotency.js';
import { errorsByStatus, IDEMPOTENT_ACTIONS } from './action-errors.js';

/**
 * The company API's contract as an OpenAPI 3.1 document (docs/design.md section 1.1), a pure function of the
 * zod schemas of shared/company-api/calls.ts, the error table and the base URL: every field, limit, description
 * and example comes from the schemas through `z.toJSONSchema` (JSON Schema 2020-12, OpenAPI 3.1's dialect),
 * never from a second copy. Each action is its own path, `/api/company.php?a=<action>`, since one path has one
 * POST; design.md section 1.1 says why the action is in the path key and not an `a` parameter. The events the
 * cloud sends to a company's callback address are its `webhooks`, one per kind, from the schemas of
 * shared/company-api/events.ts.
 */

export type JsonSchema = core.JSONSchema.JSONSchema;

export interface Example {
  summary: string;
  value: unknown;
}

export interface MediaType {
  schema: JsonSchema;
  examples: Record<string, Example>;
}

/** A reference to a component; usable wherever a schema is. */
export interface Ref {
  [key: string]: unknown;
  $ref: string;
}

export interface Header {
  description: string;
  schema: JsonSchema;
}

export interface Parameter {
  name: string;
  in: 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
}

export interface Response {
  description: string;
  headers: Record<string, Ref>;
  /** JSON, or for a streaming action `text/event-stream`. */
  content: Partial<Record<'application/json' | 'text/event-stream', MediaType>>;
}

/** The one media type a response lists: JSON, or the event stream of `listen`. */
export function mediaOf(response: Response): MediaType {
  const media = response.content['application/json'] ?? response.content['text/event-stream'];
  if (!media) throw new Error('A response lists no media type');
  return media;
}

export interface Operation {
  operationId: Action;
  summary: string;
  description: string;
  security: Record<string, string[]>[];
  parameters: Ref[];
  requestBody: { required: true; description: string; content: { 'application/json': MediaType } };
  responses: Record<string, Response>;
}

/** What the cloud sends to the company's callback address for one event kind (OpenAPI 3.1 `webhooks`). */
export interface WebhookOperation {
  operationId: string;
  summary: string;
  description: string;
  parameters: Ref[];
  requestBody: { required: true; description: string; content: { 'application/json': MediaType } };
  responses: Record<string, { description: string }>;
}

export interface SecurityScheme {
  type: 'apiKey';
  in: 'header';
  name: string;
  description: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; summary: string; description: string };
  servers: { url: string; description: string }[];
  paths: Record<string, { post: Operation }>;
  webhooks: Record<EventKind, { post: WebhookOperation }>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, SecurityScheme>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
  };
}

/** What each action takes and answers, and the names its schemas carry in `components.schemas`. */
export const ACTION_SCHEMAS = {
  request: {
    body: requestBodySchema,
    answer: requestAnswerSchema,
    bodyName: 'RequestBody',
    answerName: 'RequestAnswer',
  },
  status: {
    body: statusBodySchema,
    answer: statusAnswerSchema,
    bodyName: 'StatusBody',
    answerName: 'StatusAnswer',
  },
  open: { body: openBodySchema, answer: openAnswerSchema, bodyName: 'OpenBody', answerName: 'OpenAnswer' },
  trigger: {
    body: triggerBodySchema,
    answer: triggerAnswerSchema,
    bodyName: 'TriggerBody',
    answerName: 'TriggerAnswer',
  },
  listen: {
    body: listenBodySchema,
    answer: listenMessageSchema,
    bodyName: 'ListenBody',
    answerName: 'ListenMessage',
  },
  sandbox: {
    body: sandboxBodySchema,
    answer: sandboxAnswerSchema,
    bodyName: 'SandboxBody',
    answerName: 'SandboxAnswer',
  },
} as const satisfies Record<
  Action,
  { body: z.ZodType; answer: z.ZodType; bodyName: string; answerName: string }
>;

const ACTION_TEXTS: Record<Action, { summary: string; description: string }> = {
  request: {
    summary: 'Ask a customer for access',
    description:
      'Creates an access request. Show its `url` to the customer as a QR code; they claim it, choose the ' +
      'barrier and objects, and grant a key, or decline; `status` then shows which.',
  },
  status: {
    summary: "Read a request's state",
    description:
      'The state of one of your requests, and once access is granted, the key and the objects it opens. ' +
      'Read-only: it may be called as often as needed.',
  },
  open: {
    summary: 'Open an object now',
    description:
      "Checks the key, writes the customer's journal entry, sends the signed command to the barrier's " +
      'controller and answers once the controller confirmed, within 8 seconds. Nothing is queued: a gate ' +
      'never opens later.',
  },
  trigger: {
    summary: 'Send a sample event',
    description:
      'Writes a sample event of the kind you name to your outbox, delivered to your callback address and ' +
      'every `listen` of yours like any event: a way to try your receiver without a customer.',
  },
  listen: {
    summary: 'Stream your events',
    description:
      'Answers a `text/event-stream` that carries each event of yours written from now on, as the very ' +
      'delivery your callback address gets (headers and body, signed), until you close it; ' +
      '`gatelink-company listen --forward-to` forwards each to a local address. At most 4 at once per company.',
  },
  sandbox: {
    summary: "Move your sandbox's customer and barrier",
    description:
      'With `"sandbox": true` only: the simulated customer of your sandbox grants a request or withdraws a ' +
      'key, or its barrier is set to answer the next openings as chosen (opened, offline, busy, or the gate ' +
      'not moving). Any call with `"sandbox": true` reaches your sandbox alone; see cloud/README.md, "The sandbox".',
  },
};

/** Actions whose answer is a stream of Server-Sent Events, each message's `data` its answer schema. */
const STREAMING: readonly Action[] = ['listen'];

/** The path of an action's operation: the real URL of its call, query included. */
export function actionPath(action: Action): string {
  return `/api/company.php?a=${action}`;
}

const SCHEMA_PREFIX = '#/components/schemas/';
const ref = (section: 'schemas' | 'parameters' | 'headers', name: string): Ref => ({
  $ref: `#/components/${section}/${name}`,
});

/** The JSON Schema of what a schema accepts (its input), in OpenAPI 3.1's dialect, which needs no `$schema`. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
  return rest;
}

/** `X-Service-Org` from `x-service-org`: header names as the README writes them. */
function headerName(lowercase: string): string {
  return lowercase.replace(
    /(^|-)([a-z])/g,
    (_all, dash: string, letter: string) => dash + letter.toUpperCase(),
  );
}

const SIGNATURE_SCHEMES: Record<keyof typeof SIGNATURE_HEADERS, { scheme: string; description: string }> = {
  org: {
    scheme: 'ServiceOrg',
    description: 'Your domain, ASCII (punycode `xn--...` for national characters).',
  },
  ts: {
    scheme: 'ServiceTs',
    description: `Unix time in seconds, within ±${TIMESTAMP_TOLERANCE_SECONDS} s of the cloud's clock.`,
  },
  nonce: { scheme: 'ServiceNonce', description: '32 hexadecimal characters, fresh for every call.' },
  sig: {
    scheme: 'ServiceSig',
    description:
      'Standard base64 of the Ed25519 signature of the base string ' +
      '`<X-Service-Org>.<X-Service-Ts>.<X-Service-Nonce>.<lowercase hex SHA-256 of the raw body>`, UTF-8.',
  },
};

function securitySchemes(): Record<string, SecurityScheme> {
  return Object.fromEntries(
    (Object.keys(SIGNATURE_SCHEMES) as (keyof typeof SIGNATURE_HEADERS)[]).map((key) => [
      SIGNATURE_SCHEMES[key].scheme,
      {
        type: 'apiKey',
        in: 'header',
        name: headerName(SIGNATURE_HEADERS[key]),
        description: SIGNATURE_SCHEMES[key].description,
      },
    ]),
  );
}

/**
 * Signature mode is the four headers together (one requirement naming all four); secret mode has no header at
 * all, so its alternative is the empty requirement, and its credentials are the body's `SecretCredentials`.
 */
function security(): Record<string, string[]>[] {
  const signature = Object.fromEntries(Object.values(SIGNATURE_SCHEMES).map(({ scheme }) => [scheme, []]));
  return [signature, {}];
}

function components(): OpenApiDocument['components'] {
  const schemas: Record<string, JsonSchema> = {};
  for (const action of ACTIONS) {
    const { body, answer, bodyName, answerName } = ACTION_SCHEMAS[action];
    schemas[bodyName] = jsonSchemaOf(body);
    schemas[answerName] = jsonSchemaOf(answer);
  }
  for (const kind of EVENT_KINDS) schemas[eventSchemaName(kind)] = jsonSchemaOf(eventSchema(kind));
  schemas.SecretCredentials = jsonSchemaOf(secretCredentialsSchema);
  schemas.Error = jsonSchemaOf(errorAnswerSchema);
  return {
    schemas,
    securitySchemes: securitySchemes(),
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'For 24 hours the same key with the same body answers the first answer again instead of acting ' +
          'twice; with another body, 422 idempotency_conflict; while the first call runs, 409 ' +
          'idempotency_in_progress. A 429 rate_limit is not kept. Keys are per company and per action.',
        schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source, examples: ['ORD-1042-open-1'] },
      },
      ...webhookParameters(),
    },
    headers: {
      XRequestId: {
        description: 'Our id of the call, on every answer: quote it when you report a problem.',
        schema: { type: 'string', format: 'uuid' },
      },
      RetryAfter: {
        description: 'Seconds until the key may open again.',
        schema: { type: 'integer', minimum: 1 },
      },
    },
  };
}

/** An example body for secret mode: the action's first example with the credentials beside it. */
function bodyExamples(action: Action): Record<string, Example> {
  const schema = ACTION_SCHEMAS[action].body;
  const first = (z.globalRegistry.get(schema)?.examples as Record<string, unknown>[] | undefined)?.[0] ?? {};
  const credentials = { org_id: 42, secret: 'glsk_Ex4mpleSecretEx4mpleSecretEx4mpleSecret00' };
  return {
    signed: {
      summary: 'Body of a signed call (the credentials are in the X-Service-* headers)',
      value: first,
    },
    secret: {
      summary: 'Body in secret mode (org_id and secret beside the fields)',
      value: { ...first, ...credentials },
    },
  };
}

function successResponse(action: Action): Response {
  const { answer, answerName } = ACTION_SCHEMAS[action];
  const meta = z.globalRegistry.get(answer);
  const examples = (meta?.examples as unknown[] | undefined) ?? [];
  return {
    description: meta?.description ?? 'Done.',
    headers: { 'X-Request-Id': ref('headers', 'XRequestId') },
    content: {
      [STREAMING.includes(action) ? 'text/event-stream' : 'application/json']: {
        schema: ref('schemas', answerName),
        examples: Object.fromEntries(
          examples.map((value, i) => [
            `answer${i + 1}`,
            {
              summary: examples.length > 1 ? `Answer, example ${i + 1} of ${examples.length}` : 'Answer',
              value,
            },
          ]),
        ),
      },
    },
  };
}

function errorExample(code: ErrorCode): Example {
  const value: Record<string, string> = { error: code, message: ERRORS[code].message };
  if (code === 'device_error') value.detail = 'no_carrier';
  return { summary: ERRORS[code].message, value };
}

/** One status's refusals: the error shape with `error` limited to this status's codes of the action. */
function errorResponse(status: number, codes: ErrorCode[]): Response {
  return {
    description: codes.map((code) => `\`${code}\`: ${ERRORS[code].message}`).join('\n\n'),
    headers: {
      'X-Request-Id': ref('headers', 'XRequestId'),
      ...(status === 429 ? { 'Retry-After': ref('headers', 'RetryAfter') } : {}),
    },
    content: {
      'application/json': {
        schema: {
          allOf: [{ $ref: `${SCHEMA_PREFIX}Error` }],
          type: 'object',
          properties: { error: { type: 'string', enum: codes } },
          required: ['error'],
        },
        examples: Object.fromEntries(codes.map((code) => [code, errorExample(code)])),
      },
    },
  };
}

function operation(action: Action): Operation {
  const responses: Record<string, Response> = { '200': successResponse(action) };
  for (const [status, codes] of errorsByStatus(action))
    responses[String(status)] = errorResponse(status, codes);
  return {
    operationId: action,
    ...ACTION_TEXTS[action],
    security: security(),
    parameters: IDEMPOTENT_ACTIONS.includes(action) ? [ref('parameters', 'IdempotencyKey')] : [],
    requestBody: {
      required: true,
      description:
        `A JSON object of at most ${say.bytes(BODY_LIMIT_BYTES)}, sent with Content-Type: application/json. ` +
        'In secret mode it also carries `org_id` and `secret` (SecretCredentials).',
      content: {
        'application/json': {
          schema: {
            allOf: [ref('schemas', ACTION_SCHEMAS[action].bodyName), ref('schemas', 'SecretCredentials')],
          },
          examples: bodyExamples(action),
        },
      },
    },
    responses,
  };
}

/** `OpenGateOpenedEvent` for `open.gate_opened`: the name of a kind's body in `components.schemas`. */
export function eventSchemaName(kind: EventKind): string {
  return `${kind
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;
}

/** The Standard Webhooks headers of every delivery (docs/design.md section 6), as header parameters. */
const WEBHOOK_PARAMETERS: Record<keyof typeof WEBHOOK_HEADERS, { name: string; description: string }> = {
  id: { name: 'WebhookId', description: "The event's `id`: drop a repeat by it." },
  timestamp: {
    name: 'WebhookTimestamp',
    description: 'Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock.',
  },
  signature: {
    name: 'WebhookSignature',
    description:
      `Space-separated signatures of \`<webhook-id>.<webhook-timestamp>.<body>\` (UTF-8, the raw body as received): ` +
      `\`${WEBHOOK_HMAC_VERSION},<standard base64 HMAC-SHA256>\` under each of your signing secrets still valid ` +
      '(`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, ' +
      `then \`${WEBHOOK_SIGNATURE_VERSION},<standard base64 Ed25519 signature>\` with our key, ` +
      '`{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough.',
  },
};

function webhookParameters(): Record<string, Parameter> {
  return Object.fromEntries(
    (Object.keys(WEBHOOK_PARAMETERS) as (keyof typeof WEBHOOK_HEADERS)[]).map((key) => [
      WEBHOOK_PARAMETERS[key].name,
      {
        name: WEBHOOK_HEADERS[key],
        in: 'header',
        required: true,
        description: WEBHOOK_PARAMETERS[key].description,
        schema: { type: 'string' },
      },
    ]),
  );
}

const DELIVERY =
  `Answer with any 2xx status within ${DEFAULT_DELIVERY.timeoutMs / 1000} s: that is a delivery. Anything else ` +
  '(another status, a redirect, no answer) is tried again later, with the same body and a fresh ' +
  '`webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at ' +
  'least once; kinds and fields may be added, so accept what you do not know.';

function webhook(kind: EventKind): WebhookOperation {
  const name = eventSchemaName(kind);
  const schema = eventSchema(kind);
  const description = z.globalRegistry.get(schema.shape.data)?.description ?? '';
  return {
    operationId: `event_${kind.replace('.', '_')}`,
    summary: description,
    description: `The \`${kind}\` event, POSTed to your callback address. ${DELIVERY}`,
    parameters: Object.values(WEBHOOK_PARAMETERS).map(({ name: parameter }) => ref('parameters', parameter)),
    requestBody: {
      required: true,
      description: 'The event, `{"type", "id", "at", "data"}`, signed as the headers say.',
      content: {
        'application/json': {
          schema: ref('schemas', name),
          examples: { [kind]: { summary: `The \`${kind}\` event`, value: EVENT_EXAMPLES[kind] } },
        },
      },
    },
    responses: { '2XX': { description: 'Delivered: nothing more is sent for this event.' } },
  };
}

const DESCRIPTION = [
  'Every call is `POST /api/company.php?a=<action>` with a JSON object as body; success is 200 with a JSON ' +
    'object, and every answer carries `X-Request-Id`. Version 1 for good: changes are only additive (new ' +
    'optional fields, new error codes).',
  'Sign each call with the four `X-Service-*` headers, or, for a company without a domain, send `org_id` and ' +
    '`secret` in the body. In this document the signature is one security requirement naming all four header ' +
    'schemes, and secret mode is the empty requirement beside it, its fields the `SecretCredentials` schema.',
  'The events Gatelink POSTs to your callback address are the `webhooks`, one per kind.',
].join('\n\n');

/** The document for a cloud served at `baseUrl` (BASE_URL). */
export function openApiDocument(baseUrl: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatelink company API',
      version: '1',
      summary: "Open gates with the customer's consent.",
      description: DESCRIPTION,
    },
    servers: [{ url: baseUrl, description: 'This Gatelink cloud' }],
    paths: Object.fromEntries(ACTIONS.map((action) => [actionPath(action), { post: operation(action) }])),
    webhooks: Object.fromEntries(EVENT_KINDS.map((kind) => [kind, { post: webhook(kind) }])) as Record<
      EventKind,
      { post: WebhookOperation }
    >,
    components: components(),
  };
}
