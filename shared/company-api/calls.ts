import { z } from 'zod';
import { MAX_ID } from '../limits.js';
import { notPrintableMessage, PRINTABLE_TEXT } from '../printable-text.js';
import { grantShapeSchema } from './grant-shape.js';
import { keyNumberSchema } from './key-numbers.js';
import { sandboxFlagSchema, sandboxMarkSchema } from './sandbox-calls.js';

/**
 * The company API's calls as data (cloud/README.md, "Calls"; docs/design.md sections 1 to 4): the body each
 * action accepts and the answer it gives. The cloud validates bodies with these very schemas, the OpenAPI
 * document is generated from them, and the company client takes its types from them, so the three cannot
 * drift apart. Bodies are loose objects: auth fields (`org_id`, `secret`) and fields added later pass through.
 * The `.meta` descriptions and examples are what the document (cloud/faces/api-contract/) and its reference page say.
 */
export const ACTIONS = ['request', 'status', 'open', 'trigger', 'listen', 'sandbox'] as const;
export type Action = (typeof ACTIONS)[number];

/** A request's lifetime in hours (docs/design.md section 3). */
export const TTL_HOURS = { min: 1, max: 720, default: 24 } as const;

/** `ref`: 1..64 printable characters (docs/design.md section 3; cloud/README.md, "Printable text"). */
const refSchema = z
  .string()
  .min(1, 'ref must be 1..64 printable characters')
  .max(64, 'ref must be 1..64 printable characters')
  .regex(PRINTABLE_TEXT, notPrintableMessage('ref'))
  .meta({
    description:
      'Your own reference, shown to the customer beside your name: 1..64 printable characters (no control, ' +
      'separator or invisible characters; cloud/README.md, "Printable text"). Not unique.',
    examples: ['ORD-1042'],
  });

export const requestBodySchema = z
  .looseObject({
    sandbox: sandboxFlagSchema,
    ref: refSchema.optional(),
    ttl_hours: z
      .number({ error: 'ttl_hours must be an integer' })
      .int('ttl_hours must be an integer')
      .min(TTL_HOURS.min, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
      .max(TTL_HOURS.max, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
      .optional()
      .meta({
        description: `How long the customer may take to grant access, in hours: ${TTL_HOURS.min}..${TTL_HOURS.max}, ${TTL_HOURS.default} when left out.`,
        default: TTL_HOURS.default,
        examples: [48],
      }),
    shape: grantShapeSchema.optional().meta({
      description:
        'The access you ask for (docs/design.md section 3.1): hours of the week, a start, an end, a number of ' +
        'openings. The customer sees it and may grant it or less; `status` shows what was granted. Left out: ' +
        'the customer chooses.',
    }),
  })
  .meta({
    description: 'A new access request. Every field is optional; an empty object asks with the defaults.',
    examples: [
      { ref: 'ORD-1042', ttl_hours: 48 },
      {
        ref: 'CLEAN-7',
        shape: {
          windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' }],
          starts_at: '2026-12-07 07:00:00',
          ends_at: '2026-12-19 17:00:00',
        },
      },
      {},
    ],
  });

export const statusBodySchema = z
  .looseObject({
    sandbox: sandboxFlagSchema,
    code: z
      .string({ error: 'code must be the request code, a string' })
      .min(1, 'code must be the 12-character request code')
      .max(64, 'code must be the 12-character request code')
      .meta({
        description:
          'The code `request` answered: 12 characters of Crockford base32, accepted in any case. ' +
          "Another company's code answers 404 not_found, like an unknown one.",
        examples: ['7KQ2M9XG4TPW'],
      }),
  })
  .meta({ description: 'Which request to read.', examples: [{ code: '7KQ2M9XG4TPW' }] });

export const openBodySchema = z
  .looseObject({
    sandbox: sandboxFlagSchema,
    key_ref: z
      .number({ error: 'key_ref must be an integer' })
      .int('key_ref must be an integer')
      .positive()
      .max(MAX_ID, 'key_ref is out of range')
      .meta({ description: 'The key the customer granted: `key_ref` of `status`.', examples: [311] }),
    number_id: z
      .number({ error: 'number_id must be an integer' })
      .int('number_id must be an integer')
      .positive()
      .max(MAX_ID, 'number_id is out of range')
      .meta({ description: "The object to open: a `number_id` of the key's `numbers`.", examples: [17] }),
    actor: z
      .string()
      .trim()
      .max(128, 'actor must be at most 128 characters')
      // A journal line must read as what it is (cloud/README.md, "Printable text").
      .regex(PRINTABLE_TEXT, notPrintableMessage('actor'))
      .meta({
        description:
          'The employee who opens, as the customer reads it in the journal. Trimmed of white space first; then ' +
          '1..128 printable characters. Missing or empty answers 400 actor_required.',
        examples: ['Anna, shift B'],
      }),
  })
  .meta({
    description:
      'Open one object of a key, now. Answered once the controller confirmed the opening, within 8 s. On a key ' +
      'whose customer approves each opening (`ask_first_s` in `status`), the call first waits up to that many ' +
      'seconds (at most 120) for their answer: 403 `denied` or `not_answered` without an Allow, so allow such a ' +
      'call up to 128 s before you give up on it.',
    examples: [{ key_ref: 311, number_id: 17, actor: 'Anna, shift B' }],
  });

/**
 * Secret mode's credentials (cloud/README.md, "Secret (companies without a domain)"), sent in the body beside
 * the action's fields; cloud/rules/call-auth/secret.ts checks them with `orgIdSchema` and `secretSchema`. In signature mode
 * `org_id` may be sent alone, and must then be the signing company's id.
 */
/** `org_id`: the company's id, as cloud/rules/call-auth/secret.ts checks it (400 `invalid_field` with this message). */
export const orgIdSchema = z
  .number({ error: 'org_id must be a positive integer.' })
  .int('org_id must be a positive integer.')
  .positive('org_id must be a positive integer.')
  .max(MAX_ID, 'org_id must be a positive integer.');

/** `secret`: a string of at most 256 characters; whether it is the company's is the database's to say. */
export const secretSchema = z
  .string({ error: 'secret must be a string.' })
  .max(256, 'secret must be a string.');

export const secretCredentialsSchema = z
  .object({
    org_id: orgIdSchema
      .optional()
      .meta({ description: "Your company's id (secret mode; optional in signature mode).", examples: [42] }),
    secret: secretSchema.optional().meta({
      description: 'Your secret, `glsk_` and 43 base64url characters (secret mode only).',
      examples: ['glsk_Ex4mpleSecretEx4mpleSecretEx4mpleSecret00'],
    }),
  })
  .meta({
    description:
      'Secret mode: send `org_id` and `secret` in the body, both or neither. A company with a domain signs ' +
      'instead (403 secret_disabled).',
  });

/** `YYYY-MM-DD HH:MM:SS` in UTC (docs/design.md section 1). */
const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
const at = (description: string) =>
  timestamp.meta({ description: `${description}, \`YYYY-MM-DD HH:MM:SS\` in UTC.` });

export const requestAnswerSchema = z
  .object({
    sandbox: sandboxMarkSchema,
    code: z.string().meta({ description: 'The request code, for `status`.', examples: ['7KQ2M9XG4TPW'] }),
    url: z.string().meta({
      description: 'Where the customer grants access, `{base_url}/c/<code>`: show it as a QR code.',
      examples: ['https://gatelink.example/c/7KQ2M9XG4TPW'],
    }),
    expires_in_hours: z
      .number()
      .int()
      .meta({ description: "The request's lifetime in hours.", examples: [48] }),
    expires_at: at('When the request expires if not granted'),
  })
  .meta({
    description: 'The new request.',
    examples: [
      {
        code: '7KQ2M9XG4TPW',
        url: 'https://gatelink.example/c/7KQ2M9XG4TPW',
        expires_in_hours: 48,
        expires_at: '2026-12-03 09:30:00',
      },
    ],
  });

export const REQUEST_STATES = ['new', 'claimed', 'issued', 'revoked', 'expired', 'declined'] as const;

/** A field appears once it has a value (cloud/README.md, "`status` fields"). */
export const statusAnswerSchema = z
  .object({
    sandbox: sandboxMarkSchema,
    code: z.string().meta({ description: 'The request code, in upper case.' }),
    state: z.enum(REQUEST_STATES).meta({
      description:
        'new → claimed → issued → revoked; new or claimed → expired when the request ends before access is ' +
        'granted; claimed → declined when the customer says no. expired and declined are final.',
    }),
    expires_at: at("The request's end"),
    ref: z.string().optional().meta({ description: 'Your `ref`, when given at creation.' }),
    claimed_at: at('When a customer claimed the request').optional(),
    key_ref: z.number().int().optional().meta({ description: 'The granted key, for `open`; from issuing.' }),
    issued_at: at('When the customer granted access').optional(),
    numbers: z
      .array(keyNumberSchema)
      .optional()
      .meta({ description: 'The objects the key may open; from issuing.' }),
    key_expires_at: at("The key's end, when the customer set one").optional(),
    revoked_at: at('When the customer withdrew access').optional(),
    shape: grantShapeSchema.optional().meta({
      description:
        "The shape the customer granted, once issued and when they set one: `windows` in the barrier's " +
        '`time_zone`, `starts_at`, `ends_at` (the same moment as `key_expires_at`), `openings` in all.',
    }),
    time_zone: z
      .string()
      .optional()
      .meta({
        description: "The barrier's IANA time zone, in which `shape.windows` are read; from issuing.",
        examples: ['Europe/Berlin'],
      }),
    openings_used: z.number().int().optional().meta({
      description:
        'Openings made so far, when `shape.openings` limits them (under way and unanswered ones count).',
    }),
    ask_first_s: z
      .number()
      .int()
      .optional()
      .meta({
        description:
          'Present when the customer asks to approve each opening: `open` then waits up to this many seconds for ' +
          'their answer before it sends the command, and answers 403 `denied` or `not_answered` without one.',
      }),
    declined_at: at('When the customer declined the request').optional(),
  })
  .meta({
    description: 'The request as it stands. A field appears once it has a value.',
    examples: [
      {
        code: '7KQ2M9XG4TPW',
        state: 'issued',
        expires_at: '2026-12-03 09:30:00',
        ref: 'ORD-1042',
        claimed_at: '2026-12-01 10:02:11',
        key_ref: 311,
        issued_at: '2026-12-01 10:03:40',
        numbers: [{ number_id: 17, label: 'Main gate' }],
      },
      { code: '7KQ2M9XG4TPW', state: 'new', expires_at: '2026-12-03 09:30:00' },
    ],
  });

export const openAnswerSchema = z
  .object({
    sandbox: sandboxMarkSchema,
    ok: z.literal(1),
    id: z.number().int().meta({ description: "The opening's entry in the customer's journal." }),
  })
  .meta({ description: 'The controller confirmed the opening.', examples: [{ ok: 1, id: 90412 }] });

/** Every refusal: the code from shared/errors.ts, its sentence, and the field or detail where there is one. */
export const errorAnswerSchema = z
  .object({
    error: z.string().meta({ description: 'The error code (cloud/README.md, "Errors").' }),
    message: z
      .string()
      .meta({ description: 'One sentence saying what to do; may be more specific than the table.' }),
    field: z.string().optional().meta({ description: 'The field at fault, for invalid_field.' }),
    detail: z.string().optional().meta({ description: "The controller's reason, for device_error." }),
  })
  .meta({ description: 'A refusal.' });

export type RequestBody = z.input<typeof requestBodySchema>;
export type StatusBody = z.input<typeof statusBodySchema>;
export type OpenBody = z.input<typeof openBodySchema>;
export type RequestAnswer = z.infer<typeof requestAnswerSchema>;
export type StatusAnswer = z.infer<typeof statusAnswerSchema>;
export type OpenAnswer = z.infer<typeof openAnswerSchema>;
export type ErrorAnswer = z.infer<typeof errorAnswerSchema>;
