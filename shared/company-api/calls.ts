import { z } from 'zod';
import { MAX_ID } from '../limits.js';
import { isPrintableText, notPrintableMessage } from '../printable-text.js';

/**
 * The company API's calls as data (cloud/README.md, "Calls"; docs/design.md sections 1 to 4): the body each
 * action accepts and the answer it gives. The cloud validates bodies with these very schemas, the OpenAPI
 * document is generated from them, and the company client takes its types from them, so the three cannot
 * drift apart. Bodies are loose objects: auth fields (`org_id`, `secret`) and fields added later pass through.
 */
export const ACTIONS = ['request', 'status', 'open'] as const;
export type Action = (typeof ACTIONS)[number];

/** A request's lifetime in hours (docs/design.md section 3). */
export const TTL_HOURS = { min: 1, max: 720, default: 24 } as const;

/** `ref`: 1..64 printable characters (docs/design.md section 3; cloud/README.md, "Printable text"). */
const refSchema = z
  .string()
  .min(1, 'ref must be 1..64 printable characters')
  .max(64, 'ref must be 1..64 printable characters')
  .refine(isPrintableText, notPrintableMessage('ref'));

export const requestBodySchema = z.looseObject({
  ref: refSchema.optional(),
  ttl_hours: z
    .number({ error: 'ttl_hours must be an integer' })
    .int('ttl_hours must be an integer')
    .min(TTL_HOURS.min, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
    .max(TTL_HOURS.max, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
    .optional(),
});

export const statusBodySchema = z.looseObject({
  code: z
    .string({ error: 'code must be the request code, a string' })
    .min(1, 'code must be the 12-character request code')
    .max(64, 'code must be the 12-character request code'),
});

export const openBodySchema = z.looseObject({
  key_ref: z
    .number({ error: 'key_ref must be an integer' })
    .int('key_ref must be an integer')
    .positive()
    .max(MAX_ID, 'key_ref is out of range'),
  number_id: z
    .number({ error: 'number_id must be an integer' })
    .int('number_id must be an integer')
    .positive()
    .max(MAX_ID, 'number_id is out of range'),
  actor: z
    .string()
    .transform((value) => value.trim())
    .pipe(
      z
        .string()
        .max(128, 'actor must be at most 128 characters')
        // A journal line must read as what it is (cloud/README.md, "Printable text").
        .refine(isPrintableText, notPrintableMessage('actor')),
    ),
});

/** `YYYY-MM-DD HH:MM:SS` in UTC (docs/design.md section 1). */
const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

export const requestAnswerSchema = z.object({
  code: z.string(),
  url: z.string(),
  expires_in_hours: z.number().int(),
  expires_at: timestamp,
});

export const REQUEST_STATES = ['new', 'claimed', 'issued', 'revoked', 'expired'] as const;

/** A field appears once it has a value (cloud/README.md, "`status` fields"). */
export const statusAnswerSchema = z.object({
  code: z.string(),
  state: z.enum(REQUEST_STATES),
  expires_at: timestamp,
  ref: z.string().optional(),
  claimed_at: timestamp.optional(),
  key_ref: z.number().int().optional(),
  issued_at: timestamp.optional(),
  numbers: z.array(z.object({ number_id: z.number().int(), label: z.string() })).optional(),
  key_expires_at: timestamp.optional(),
  revoked_at: timestamp.optional(),
});

export const openAnswerSchema = z.object({ ok: z.literal(1), id: z.number().int() });

/** Every refusal: the code from shared/errors.ts, its sentence, and the field or detail where there is one. */
export const errorAnswerSchema = z.object({
  error: z.string(),
  message: z.string(),
  field: z.string().optional(),
  detail: z.string().optional(),
});

export type RequestBody = z.input<typeof requestBodySchema>;
export type StatusBody = z.input<typeof statusBodySchema>;
export type OpenBody = z.input<typeof openBodySchema>;
export type RequestAnswer = z.infer<typeof requestAnswerSchema>;
export type StatusAnswer = z.infer<typeof statusAnswerSchema>;
export type OpenAnswer = z.infer<typeof openAnswerSchema>;
export type ErrorAnswer = z.infer<typeof errorAnswerSchema>;
