import { z } from 'zod';
import { REQUEST_STATES } from './calls.js';
import { keyNumberSchema } from './key-numbers.js';

/**
 * The events a company receives at its callback address (docs/design.md section 6; cloud/README.md, "Events at
 * your callback address"), as data: the `data` of every kind and the body `{type, id, at, data}` around it. The
 * cloud builds its events to these types (cloud/rules/events/event-data.ts), the OpenAPI document's `webhooks`
 * are generated from these schemas, and the company client's `verifyWebhook` checks and types a delivery with
 * them, so the three cannot drift apart. Version 1 only grows: a receiver accepts fields and kinds it does not
 * know, and the document's schemas (zod's input, without `additionalProperties: false`) say so.
 */
export const EVENT_KINDS = [
  'request.claimed',
  'request.issued',
  'request.revoked',
  'request.expired',
  'request.declined',
  'request.released',
  'key.expired',
  'open.succeeded',
  'open.failed',
  'open.gate_opened',
  'open.gate_closed',
  'open.gate_not_moved',
  'gate.left_open',
  'gate.closed',
  'ping',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** A journal entry's outcome (docs/design.md section 5), as `open.*` events give it. */
export const JOURNAL_OUTCOMES = [
  'opened',
  'device_offline',
  'device_timeout',
  'device_error',
  'revoked',
  'expired',
  'rate_limit',
  'forbidden',
  'not_started',
  'outside_hours',
  'openings_used',
  'denied',
  'not_answered',
] as const;

/** The company API's timestamps, `YYYY-MM-DD HH:MM:SS` in UTC (cloud/README.md, "`status` fields"). */
const timestamp = (description: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    .meta({ description: `${description}, \`YYYY-MM-DD HH:MM:SS\` in UTC.` });

/**
 * A step time of an opening: ISO 8601 with milliseconds in UTC, the controller's time, since "gate open after
 * 1.8 s" needs more than the API's seconds (docs/design.md section 5.2).
 */
const stepTime = (description: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    .meta({ description: `${description}, ISO 8601 with milliseconds, UTC.` });

const seconds = (description: string) => z.number().nonnegative().meta({ description });

const code = z.string().meta({ description: 'The request code.' });
const ref = z.string().nullable().meta({ description: 'Your `ref`, null when the request has none.' });
const keyRef = z.number().int().meta({ description: 'The key, as `status` gives it and `open` takes it.' });

/** What a request or key event says of its request: the fields `status` answers with. */
const requestFields = {
  code,
  ref,
  state: z.enum(REQUEST_STATES).meta({ description: "The request's state now." }),
};

/** An opening's event: its journal entry, and the key and object it was made with. */
export const openEventDataSchema = z.object({
  code,
  ref,
  key_ref: keyRef,
  number_id: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The object; null when the object named is not in the key (`forbidden`).' }),
  actor: z.string().meta({ description: 'Who opened, as your `open` call named them.' }),
  journal_id: z.number().int().meta({ description: 'The journal entry: the `id` that `open` answered.' }),
  outcome: z.enum(JOURNAL_OUTCOMES).meta({ description: "The journal entry's outcome." }),
  detail: z
    .string()
    .optional()
    .meta({ description: "Only when the entry has one: a device failure's reason, a late acknowledgement." }),
});

/** What every step event of an opening says of it: its `open.*` event's fields but the outcome and detail. */
const gateEventBase = openEventDataSchema.omit({ outcome: true, detail: true }).shape;

const relayAt = stepTime('When the relay fired (the acknowledgement)');
const openedAt = stepTime('When the gate was seen open');
const closedAt = stepTime('When the gate was seen closed');
const leftOpenAt = stepTime('When the gate was found open past the limit');
const openForS = seconds('How long the gate stood open, in seconds, to a tenth.');

export const eventDataSchemas = {
  'request.claimed': z
    .object({ ...requestFields, claimed_at: timestamp('When the customer claimed the request') })
    .meta({ description: 'The customer opened your link: the request is `claimed`.' }),
  'request.issued': z
    .object({
      ...requestFields,
      key_ref: keyRef,
      issued_at: timestamp('When the customer granted access'),
      numbers: z.array(keyNumberSchema).meta({ description: 'The objects the key may open.' }),
      key_expires_at: timestamp("The key's end, only when the customer set one").optional(),
    })
    .meta({ description: 'The customer granted access: the key and the objects it opens.' }),
  'request.revoked': z
    .object({ ...requestFields, key_ref: keyRef, revoked_at: timestamp('When the customer withdrew access') })
    .meta({
      description: 'The customer withdrew access (or paired the barrier to someone else).',
    }),
  'request.expired': z
    .object({
      ...requestFields,
      state: z.literal('expired'),
      expired_at: timestamp("When the request's lifetime ended"),
    })
    .meta({ description: 'The request lapsed before access was granted.' }),
  'request.declined': z
    .object({
      ...requestFields,
      state: z.literal('declined'),
      declined_at: timestamp('When the customer declined'),
    })
    .meta({
      description:
        'The customer declined the request: it ends here, and nothing is said of them or their barriers.',
    }),
  'request.released': z
    .object({
      ...requestFields,
      state: z.literal('new'),
      released_at: timestamp('When the customer let the request go'),
    })
    .meta({
      description:
        'The customer who claimed the request let it go, having opened it with the wrong account: it is `new` ' +
        'again, without `claimed_at`, and another account may claim it.',
    }),
  'key.expired': z
    .object({ ...requestFields, key_ref: keyRef, key_expires_at: timestamp('The end the customer set') })
    .meta({ description: 'The end the customer set to the access has passed; the request keeps its state.' }),
  'open.succeeded': openEventDataSchema.meta({ description: 'An `open` call opened the barrier.' }),
  'open.failed': openEventDataSchema.meta({
    description:
      "An `open` call with one of your keys did not open it: the journal entry's `outcome` says why.",
  }),
  'open.gate_opened': z.object({ ...gateEventBase, relay_at: relayAt, opened_at: openedAt }).meta({
    description:
      'The gate of one of your openings was seen open after the relay fired (controllers with a position sensor).',
  }),
  'open.gate_closed': z
    .object({
      ...gateEventBase,
      relay_at: relayAt,
      opened_at: openedAt,
      closed_at: closedAt,
      open_for_s: openForS,
    })
    .meta({ description: 'The gate your opening opened was seen closed again.' }),
  'open.gate_not_moved': z
    .object({
      ...gateEventBase,
      relay_at: relayAt,
      not_moved_at: stepTime('When the limit passed without the gate moving'),
      limit_s: seconds("The barrier's limit for the gate to move, in seconds."),
    })
    .meta({ description: "The relay fired, but the gate was not seen moving within the barrier's limit." }),
  'gate.left_open': z
    .object({
      ...gateEventBase,
      opened_at: openedAt,
      left_open_at: leftOpenAt,
      limit_s: seconds("The customer's limit for the gate to stand open, in seconds."),
    })
    .meta({
      description: "The gate your opening opened has stayed open past the customer's limit for that barrier.",
    }),
  'gate.closed': z
    .object({
      ...gateEventBase,
      opened_at: openedAt,
      left_open_at: leftOpenAt,
      closed_at: closedAt,
      open_for_s: openForS,
    })
    .meta({ description: 'The gate of a `gate.left_open` closed at last.' }),
  ping: z
    .object({ message: z.string().meta({ description: 'A sentence saying what the event is.' }) })
    .meta({ description: 'A test event: a member pressed **Send a test event** in the company area.' }),
} as const satisfies Record<EventKind, z.ZodType>;

/** The `data` of each kind, as the cloud sends it. */
export type EventData = { [K in EventKind]: z.infer<(typeof eventDataSchemas)[K]> };
export type OpenEventData = z.infer<typeof openEventDataSchema>;

/** The body of one delivery of kind `kind`: `{type, id, at, data}`. */
export function eventSchema<K extends EventKind>(kind: K) {
  return z.object({
    type: z.literal(kind),
    id: z
      .string()
      .meta({ description: 'Unique per event: drop a repeat by it (delivery is at least once).' }),
    at: timestamp('When it happened'),
    data: eventDataSchemas[kind] as (typeof eventDataSchemas)[K],
  });
}

/** One event of kind `K` as delivered. */
export interface EventOf<K extends EventKind> {
  type: K;
  id: string;
  at: string;
  data: EventData[K];
}

/** Any event of a kind this version knows, discriminated by `type`. */
export type KnownEvent = { [K in EventKind]: EventOf<K> }[EventKind];

/**
 * An example of every kind, the very ones cloud/README.md shows (a test holds the two equal, and checks each
 * against its schema and the document's).
 */
export const EVENT_EXAMPLES: { [K in EventKind]: EventOf<K> } = {
  'request.claimed': {
    type: 'request.claimed',
    id: '8d2f4b6a-0c1e-4a3b-9d5f-7e9a1c3b5d7f',
    at: '2026-05-04 10:12:40',
    data: { code: 'K7QX2M9TBV4D', ref: 'ORD-1', state: 'claimed', claimed_at: '2026-05-04 10:12:40' },
  },
  'request.issued': {
    type: 'request.issued',
    id: '0b6f3d1e-8f5e-4c57-9a43-1c9e4f6f2a10',
    at: '2026-05-04 10:15:02',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      state: 'issued',
      key_ref: 42,
      issued_at: '2026-05-04 10:15:02',
      numbers: [{ number_id: 17, label: 'Main gate' }],
      key_expires_at: '2026-06-01 00:00:00',
    },
  },
  'request.revoked': {
    type: 'request.revoked',
    id: '4a6c8e0b-2d4f-4b6a-8c0e-2b4d6f8a0c2e',
    at: '2026-05-20 08:00:12',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      state: 'revoked',
      key_ref: 42,
      revoked_at: '2026-05-20 08:00:12',
    },
  },
  'request.expired': {
    type: 'request.expired',
    id: '6c8e0a2b-4d6f-4a8c-9e0b-4d6f8a0c2e4b',
    at: '2026-05-05 10:00:30',
    data: { code: 'P3MW8XK2QZ7N', ref: 'ORD-2', state: 'expired', expired_at: '2026-05-05 10:00:00' },
  },
  'request.declined': {
    type: 'request.declined',
    id: '9f1b3d5e-7a9c-4e1f-8b3d-5f7a9c1e3b5d',
    at: '2026-05-06 16:20:05',
    data: { code: 'H4NC7RW2XK9P', ref: 'ORD-3', state: 'declined', declined_at: '2026-05-06 16:20:05' },
  },
  'request.released': {
    type: 'request.released',
    id: '3e5a7c9b-1d2f-4b6e-8a0c-7d9f1b3e5a7c',
    at: '2026-05-07 09:41:18',
    data: { code: 'W2ZT8NB5QX4M', ref: 'ORD-5', state: 'new', released_at: '2026-05-07 09:41:18' },
  },
  'key.expired': {
    type: 'key.expired',
    id: 'e2c4a6b8-1d3f-4a5c-9e7b-2f4d6a8c0e1b',
    at: '2026-06-01 00:00:30',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      state: 'issued',
      key_ref: 42,
      key_expires_at: '2026-06-01 00:00:00',
    },
  },
  'open.succeeded': {
    type: 'open.succeeded',
    id: '2e4a6c8b-0d2f-4e6a-8b0c-6d8f0a2c4e6b',
    at: '2026-05-04 11:01:15',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9050,
      outcome: 'opened',
    },
  },
  'open.failed': {
    type: 'open.failed',
    id: '5d7a0c9b-2e41-4f3a-8d6e-0a9b7c1d2e3f',
    at: '2026-05-04 11:02:40',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9051,
      outcome: 'device_error',
      detail: 'no_carrier',
    },
  },
  'open.gate_opened': {
    type: 'open.gate_opened',
    id: '3f1e5a7c-9b2d-4e6f-8a1c-3e5f7a9b1d2c',
    at: '2026-05-04 11:05:03',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9052,
      relay_at: '2026-05-04T11:05:01.214Z',
      opened_at: '2026-05-04T11:05:03.015Z',
    },
  },
  'open.gate_closed': {
    type: 'open.gate_closed',
    id: '7a9c1e3f-5b7d-4f1a-9c3e-5a7c9e1f3b5d',
    at: '2026-05-04 11:05:45',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9052,
      relay_at: '2026-05-04T11:05:01.214Z',
      opened_at: '2026-05-04T11:05:03.015Z',
      closed_at: '2026-05-04T11:05:45.031Z',
      open_for_s: 42,
    },
  },
  'open.gate_not_moved': {
    type: 'open.gate_not_moved',
    id: '1c3e5a7b-9d1f-4b3c-8e5a-7c9e1b3d5f7a',
    at: '2026-05-04 12:00:31',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9060,
      relay_at: '2026-05-04T12:00:00.380Z',
      not_moved_at: '2026-05-04T12:00:31.002Z',
      limit_s: 30,
    },
  },
  'gate.left_open': {
    type: 'gate.left_open',
    id: '5e7a9c1d-3f5b-4d7e-9a1c-3e5b7d9f1a3c',
    at: '2026-05-04 13:10:04',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9071,
      opened_at: '2026-05-04T13:00:02.500Z',
      left_open_at: '2026-05-04T13:10:04.120Z',
      limit_s: 600,
    },
  },
  'gate.closed': {
    type: 'gate.closed',
    id: '9b1d3f5a-7c9e-4a2b-8d4f-6a8c0e2b4d6f',
    at: '2026-05-04 13:12:10',
    data: {
      code: 'K7QX2M9TBV4D',
      ref: 'ORD-1',
      key_ref: 42,
      number_id: 17,
      actor: 'Anna, van 7',
      journal_id: 9071,
      opened_at: '2026-05-04T13:00:02.500Z',
      left_open_at: '2026-05-04T13:10:04.120Z',
      closed_at: '2026-05-04T13:12:09.900Z',
      open_for_s: 727.4,
    },
  },
  ping: {
    type: 'ping',
    id: 'c0e2a4b6-8d0f-4c2e-9a4b-6c8e0a2b4d6f',
    at: '2026-05-04 09:58:00',
    data: { message: 'A test event from Gatelink: your callback address receives events.' },
  },
};
