import type { JsonSchema, OpenApiDocument } from './openapi-document.js';

/**
 * What the reference page says of a JSON Schema from the OpenAPI document (docs/design.md section 1.1): each
 * field's type and limits in words, read from the document itself, so the page cannot say other than it.
 */
export interface FieldWords {
  name: string;
  type: string;
  required: boolean;
  limits: string[];
  pattern: string | undefined;
  description: string;
}

/** The schema a `$ref` names in `components.schemas`, or the schema itself. */
export function resolveSchema(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  const name = schema.$ref?.replace('#/components/schemas/', '');
  return name === undefined ? schema : (document.components.schemas[name] ?? schema);
}

/** zod's `.int()` bounds, which every integer has and which say nothing to a reader. */
const SAFE = Number.MAX_SAFE_INTEGER;

function typeWords(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(String).join(', ')}`;
  if (schema.const !== undefined) return `always ${JSON.stringify(schema.const)}`;
  if (schema.type === 'array') {
    const items = schema.items as JsonSchema | undefined;
    return items?.type === 'object' ? 'array of objects' : `array of ${typeWords(items ?? {})}`;
  }
  return typeof schema.type === 'string' ? schema.type : 'any';
}

function lowest(schema: JsonSchema): number | undefined {
  if (typeof schema.minimum === 'number' && schema.minimum > -SAFE) return schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number') {
    return schema.type === 'integer' ? schema.exclusiveMinimum + 1 : undefined;
  }
  return undefined;
}

function limitWords(schema: JsonSchema): string[] {
  const limits: string[] = [];
  const { minLength, maxLength } = schema;
  if (minLength !== undefined && maxLength !== undefined)
    limits.push(`${minLength}..${maxLength} characters`);
  else if (maxLength !== undefined) limits.push(`at most ${maxLength} characters`);
  else if (minLength !== undefined) limits.push(`at least ${minLength} characters`);
  const min = lowest(schema);
  const max = typeof schema.maximum === 'number' && schema.maximum < SAFE ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) limits.push(`${min}..${max}`);
  else if (max !== undefined) limits.push(`at most ${max}`);
  else if (min !== undefined) limits.push(`at least ${min}`);
  if (schema.default !== undefined) limits.push(`default ${JSON.stringify(schema.default)}`);
  return limits;
}

/** The fields of an object schema (its `allOf` parts merged), required ones first as the schema lists them. */
export function fieldsOf(document: OpenApiDocument, schema: JsonSchema): FieldWords[] {
  const resolved = resolveSchema(document, schema);
  if (resolved.allOf) return resolved.allOf.flatMap((part) => fieldsOf(document, part));
  const required = new Set(resolved.required ?? []);
  return Object.entries(resolved.properties ?? {}).map(([name, value]) => {
    const field = typeof value === 'boolean' ? {} : value;
    return {
      name,
      type: typeWords(field),
      required: required.has(name),
      limits: limitWords(field),
      pattern: typeof field.pattern === 'string' ? field.pattern : undefined,
      description: field.description ?? '',
    };
  });
}
