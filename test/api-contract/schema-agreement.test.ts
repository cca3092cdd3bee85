import { describe, expect, it } from 'vitest';
import {
  ACTION_SCHEMAS,
  type JsonSchema,
  openApiDocument,
} from '../../cloud/faces/api-contract/openapi-document.js';
import { ACTIONS, type Action } from '../../shared/company-api/calls.js';
import { MAX_ID } from '../../shared/limits.js';
import { DocumentValidator } from './document-validator.js';

/**
 * The document and the cloud cannot disagree about a body (docs/design.md section 1.1): every sample, valid and
 * invalid at each limit, gets the same verdict from the zod schema the cloud validates with and from a JSON
 * Schema validator running the document's schema for that body. Samples come from both sides: written at the
 * limits the README states, and made from the limits the document states.
 */
const document = openApiDocument('https://gatelink.example');
const validator = new DocumentValidator(document);

/** A body the action accepts, to which each sample sets one field. */
const VALID: Record<Action, Record<string, unknown>> = {
  request: {},
  status: { code: '7KQ2M9XG4TPW' },
  open: { key_ref: 311, number_id: 17, actor: 'Anna' },
  trigger: { type: 'ping' },
  listen: {},
  sandbox: { sandbox: true, do: 'grant', code: '7KQ2M9XG4TPW' },
};

const text = (length: number) => 'x'.repeat(length);

/** At the limits cloud/README.md states ("Calls", "Printable text", "Opening"). */
const WRITTEN: Record<Action, [string, unknown][]> = {
  request: [
    ['ref', ''],
    ['ref', text(1)],
    ['ref', text(64)],
    ['ref', text(65)],
    ['ref', 'Anna\nBob'],
    ['ref', 'a\u202eb'],
    ['ref', 'a\u200bb'],
    ['ref', '\ud800'],
    ['ref', 'علی\u200cاکبر'],
    ['ref', '👩\u200d💻'],
    ['ref', 12],
    ['ttl_hours', 0],
    ['ttl_hours', 1],
    ['ttl_hours', 720],
    ['ttl_hours', 721],
    ['ttl_hours', 1.5],
    ['ttl_hours', '24'],
    ['ttl_hours', null],
    ['anything_else', 'passes through'],
  ],
  status: [
    ['code', ''],
    ['code', text(1)],
    ['code', text(64)],
    ['code', text(65)],
    ['code', 12],
    ['code', undefined],
  ],
  open: [
    ['key_ref', 0],
    ['key_ref', 1],
    ['key_ref', MAX_ID],
    ['key_ref', MAX_ID + 1],
    ['key_ref', -1],
    ['key_ref', 2.5],
    ['key_ref', '311'],
    ['key_ref', undefined],
    ['number_id', 0],
    ['number_id', MAX_ID],
    ['number_id', MAX_ID + 1],
    ['number_id', 1.5],
    ['actor', text(128)],
    ['actor', text(129)],
    ['actor', 'Anna\u0007'],
    ['actor', 'Anna\u2028Bob'],
    ['actor', 'Anna\u00adBob'],
    ['actor', 'Zoë, shift B'],
    ['actor', 7],
  ],
  trigger: [
    ['type', 'ping'],
    ['type', 'open.gate_not_moved'],
    ['type', 'open.nothing'],
    ['type', ''],
    ['type', 7],
    ['type', undefined],
  ],
  listen: [
    ['anything_else', 'passes through'],
    ['sandbox', true],
    ['sandbox', false],
    ['sandbox', 'true'],
  ],
  sandbox: [
    ['do', 'withdraw'],
    ['do', 'outcome'],
    ['do', 'open'],
    ['do', undefined],
    ['code', undefined],
    ['code', text(65)],
    ['shape', { openings: 3 }],
    ['shape', { openings: 0 }],
    ['sandbox', false],
    ['sandbox', undefined],
  ],
};

/** Values at and just past each limit the document's schema states, and of the wrong type. */
function samplesFromSchema(schema: JsonSchema): unknown[] {
  const samples: unknown[] = [null, true, [], {}];
  if (schema.type === 'string') {
    samples.push(42);
    if (typeof schema.minLength === 'number')
      samples.push(text(schema.minLength), text(schema.minLength - 1));
    if (typeof schema.maxLength === 'number')
      samples.push(text(schema.maxLength), text(schema.maxLength + 1));
  }
  if (schema.type === 'integer') {
    samples.push('1', 1.5);
    for (const bound of [schema.minimum, schema.maximum, schema.exclusiveMinimum]) {
      if (typeof bound === 'number') samples.push(bound - 1, bound, bound + 1);
    }
  }
  return samples;
}

function agree(action: Action, body: Record<string, unknown>): void {
  const { body: zodSchema, bodyName } = ACTION_SCHEMAS[action];
  const byZod = zodSchema.safeParse(body).success;
  const byDocument = validator.component(bodyName)(body);
  expect(byDocument, `${action} ${JSON.stringify(body)}: zod says ${byZod}`).toBe(byZod);
}

function withField(action: Action, field: string, value: unknown): Record<string, unknown> {
  const body = { ...VALID[action] };
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
}

describe('zod and the document agree', () => {
  for (const action of ACTIONS) {
    it(`on ${action} bodies at the limits cloud/README.md states`, () => {
      agree(action, VALID[action]);
      for (const [field, value] of WRITTEN[action]) agree(action, withField(action, field, value));
    });

    it(`on ${action} bodies at the limits the document states`, () => {
      const schema = document.components.schemas[ACTION_SCHEMAS[action].bodyName]!;
      // A body of several shapes (sandbox's moves) states the fields of each.
      const shapes = (schema.oneOf as JsonSchema[] | undefined) ?? [schema];
      const fields = shapes.flatMap((shape) => Object.entries(shape.properties ?? {}));
      // Every action states its fields; listen's is `sandbox` alone, beside the credentials.
      expect(fields.length > 0, `${action} states fields`).toBe(true);
      for (const [field, fieldSchema] of fields) {
        for (const value of samplesFromSchema(fieldSchema as JsonSchema)) {
          agree(action, withField(action, field, value));
        }
      }
    });
  }

  it('except where the cloud trims actor first: the document is then stricter, never laxer', () => {
    const { body } = ACTION_SCHEMAS.open;
    for (const actor of [`  ${text(128)}  `, '\tAnna\n']) {
      const sample = withField('open', 'actor', actor);
      expect(body.safeParse(sample).success).toBe(true);
      expect(validator.component('OpenBody')(sample)).toBe(false);
    }
  });

  it('and a document that lost a limit would be caught', () => {
    const loose = openApiDocument('https://gatelink.example');
    const properties = loose.components.schemas.RequestBody!.properties as Record<string, JsonSchema>;
    delete properties.ttl_hours!.maximum;
    const looseValidator = new DocumentValidator(loose);
    const sample = { ttl_hours: 721 };
    expect(looseValidator.component('RequestBody')(sample)).not.toBe(
      ACTION_SCHEMAS.request.body.safeParse(sample).success,
    );
  });
});
