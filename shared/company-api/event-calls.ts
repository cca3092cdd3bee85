import { z } from 'zod';
import { WEBHOOK_HEADERS } from '../crypto/webhook-signing.js';
import { EVENT_KINDS } from './events.js';
import { sandboxFlagSchema, sandboxMarkSchema } from './sandbox-calls.js';

/**
 * The two calls a company's developer tries events with (docs/design.md section 6.1; cloud/README.md, "Trying
 * events"): `trigger` writes a sample event of any kind, delivered like any other; `listen` streams the company's
 * events as they are written, each as the very delivery its callback address gets, for `gatelink-company listen`
 * to forward to a local address. Apart from ./calls.ts, which ./events.ts imports.
 */

export const triggerBodySchema = z
  .looseObject({
    sandbox: sandboxFlagSchema,
    type: z.enum(EVENT_KINDS, { error: `type must be one of ${EVENT_KINDS.join(', ')}` }).meta({
      description:
        'The kind of event to send: its example in cloud/README.md, with a new `id` and the time now.',
      examples: ['open.succeeded'],
    }),
  })
  .meta({
    description:
      'Send a sample event: the example of its kind, with a new `id` and `at`, written to your outbox as any ' +
      'event is, so it reaches your callback address and every `listen` of yours. Its data names no real ' +
      'request, key or barrier.',
    examples: [{ type: 'open.succeeded' }],
  });

export const triggerAnswerSchema = z
  .object({
    sandbox: sandboxMarkSchema,
    id: z.string().meta({ description: "The sample event's `id`, as its delivery carries it." }),
    type: z.enum(EVENT_KINDS),
  })
  .meta({
    description: 'The sample event was written; it is delivered as any event is.',
    examples: [{ id: '5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b', type: 'open.succeeded' }],
  });

export const listenBodySchema = z.looseObject({ sandbox: sandboxFlagSchema }).meta({
  description:
    'Stream your events as they are written (your sandbox\'s with `"sandbox": true`), until you close the ' +
    'connection. Nothing but the credentials: an empty object in signature mode.',
  examples: [{}],
});

/**
 * One message of the stream: the `data:` of a Server-Sent Event whose `event:` is the event's kind and whose
 * `id:` is its place in your events' order. The delivery itself, headers and body, signed as your callback
 * address gets it: forward it unchanged and your receiver verifies it as a real one.
 */
export const listenMessageSchema = z
  .object({
    headers: z.object({
      [WEBHOOK_HEADERS.id]: z.string(),
      [WEBHOOK_HEADERS.timestamp]: z.string(),
      [WEBHOOK_HEADERS.signature]: z.string(),
    }),
    body: z
      .string()
      .meta({ description: 'The body exactly as a delivery sends it: `{"type", "id", "at", "data"}`.' }),
  })
  .meta({
    description:
      'A `text/event-stream`: each event a Server-Sent Event named after its kind, its `data` this JSON; a ' +
      'comment line every 25 s keeps the connection open through proxies.',
    examples: [
      {
        headers: {
          'webhook-id': '5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b',
          'webhook-timestamp': '1777889702',
          'webhook-signature':
            'v1,Q3VyaW91cyBhcmUgd2U/IFNpZ25lZCwgdG9vLg== v1a,U2lnbmVkIGJ5IHRoZSBzZXJ2aWNlIGtleS4=',
        },
        body: '{"type":"ping","id":"5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b","at":"2026-05-04 10:15:02","data":{"message":"A test event."}}',
      },
    ],
  });

export type TriggerBody = z.input<typeof triggerBodySchema>;
export type TriggerAnswer = z.infer<typeof triggerAnswerSchema>;
export type ListenMessage = z.infer<typeof listenMessageSchema>;
