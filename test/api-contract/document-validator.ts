import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import {
  type JsonSchema,
  mediaOf,
  type OpenApiDocument,
} from '../../cloud/faces/api-contract/openapi-document.js';
import type { Action } from '../../shared/company-api/calls.js';

/**
 * A JSON Schema 2020-12 validator (ajv, the dialect OpenAPI 3.1 uses) running the document's own schemas, as a
 * company's tooling would: each component under its own id, and `#/components/schemas/<name>` read as that id.
 * Formats are not asserted (as 2020-12 has it by default); patterns are ECMA-262 with the `u` flag.
 */
const BASE = 'https://gatelink.test/components/schemas/';

function withAbsoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withAbsoluteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === '$ref' && typeof inner === 'string'
        ? [key, inner.replace('#/components/schemas/', BASE)]
        : [key, withAbsoluteRefs(inner)],
    ),
  );
}

export class DocumentValidator {
  readonly #ajv = new Ajv2020({ allErrors: true, validateFormats: false });

  constructor(readonly document: OpenApiDocument) {
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      this.#ajv.addSchema({ ...(withAbsoluteRefs(schema) as JsonSchema), $id: `${BASE}${name}` });
    }
  }

  /** A component schema by name, e.g. `StatusBody`. */
  component(name: string): ValidateFunction {
    const validate = this.#ajv.getSchema(`${BASE}${name}`);
    if (!validate) throw new Error(`no schema ${name} in the document`);
    return validate;
  }

  /** The schema the document gives for `action`'s answer with this status, or undefined if it lists none. */
  answer(action: Action, status: number): ValidateFunction | undefined {
    const operation = this.document.paths[`/api/company.php?a=${action}`]?.post;
    const response = operation?.responses[String(status)];
    if (!response) return undefined;
    return this.#ajv.compile(withAbsoluteRefs(mediaOf(response).schema) as JsonSchema);
  }
}
