import type { IncomingHttpHeaders } from 'node:http';
import {
  EVENT_KINDS,
  type EventData,
  type EventKind,
  type EventOf,
  eventSchema,
  type KnownEvent,
} from '../../shared/company-api/events.js';
import { decodeBase64, KeyError, strictPublicKeyFromBase64, VerifyKey } from '../../shared/crypto/ed25519.js';
import {
  WEBHOOK_HEADERS,
  WEBHOOK_SIGNATURE_VERSION,
  webhookSignedContent,
} from '../../shared/crypto/webhook-signing.js';

/**
 * Checking an event delivery at the company's callback address (cloud/README.md, "Verifying a delivery"):
 * Standard Webhooks with asymmetric `v1a` signatures, Ed25519 over the signed content of
 * shared/crypto/webhook-signing.ts (`<webhook-id>.<webhook-timestamp>.<body>`), made with the cloud's key that `/.well-known/service.json` publishes. Only public-key verification happens
 * here, so there is no secret to compare and no comparison whose timing could leak one.
 */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookFailure =
  | 'missing_header'
  | 'bad_timestamp'
  | 'too_old'
  | 'too_new'
  | 'bad_key'
  | 'bad_signature'
  | 'not_json';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookFailure;

  constructor(reason: WebhookFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * One event as delivered (cloud/README.md, "Events at your callback address"), discriminated by `type`, so a
 * `switch (event.type)` types each branch's `data`. Fields added later pass, untyped.
 */
export type WebhookEvent = KnownEvent;
export type WebhookEventOf<K extends EventKind> = EventOf<K>;
export type { EventData, EventKind };

/**
 * An event of a kind newer than this client (version 1 only grows): verified, but not typed. It is a separate
 * type, not a member of WebhookEvent, because a member whose `type` is any string would keep every branch of a
 * `switch (event.type)` from narrowing `data`; `isKnownEvent` tells the two apart first.
 */
export interface UnknownWebhookEvent {
  type: string;
  id: string;
  at: string;
  data: unknown;
}

/** What verifyWebhook returns: an event of a kind this client knows, checked with its schema, or a newer one. */
export type DeliveredEvent = WebhookEvent | UnknownWebhookEvent;

const KINDS: ReadonlySet<string> = new Set(EVENT_KINDS);

/** Whether the event is of a kind this client knows; narrows it to WebhookEvent for a `switch (event.type)`. */
export function isKnownEvent(event: DeliveredEvent): event is WebhookEvent {
  return KINDS.has(event.type);
}

/** Whether the event is of kind `kind`; narrows its `data` to that kind's. */
export function isEventOf<K extends EventKind>(event: DeliveredEvent, kind: K): event is WebhookEventOf<K> {
  return event.type === kind;
}

export type WebhookHeaders = IncomingHttpHeaders | Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  headers: WebhookHeaders;
  /** The body exactly as received: a Buffer, or the string it decodes to in UTF-8. Not a re-serialised object. */
  body: string | Uint8Array;
  /** The cloud's key: the base64 `key` of its service.json, or `await client.webhookKey()`. */
  publicKey: string | VerifyKey;
  now?: Date;
  /** How far the delivery's timestamp may be from `now`, either way (default 300 s). */
  toleranceSeconds?: number;
}

/**
 * The verified event, or a WebhookVerificationError saying why the delivery is refused. An event of a kind this
 * client knows is checked with that kind's schema too (shared/company-api/events.ts), so its type holds.
 */
export function verifyWebhook(input: VerifyWebhookInput): DeliveredEvent {
  const id = header(input.headers, WEBHOOK_HEADERS.id);
  const timestamp = header(input.headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(input.headers, WEBHOOK_HEADERS.signature);
  const missing = [
    [WEBHOOK_HEADERS.id, id],
    [WEBHOOK_HEADERS.timestamp, timestamp],
    [WEBHOOK_HEADERS.signature, signatures],
  ].find(([, value]) => !value);
  if (missing) throw new WebhookVerificationError('missing_header', `The ${missing[0]} header is missing.`);
  checkTimestamp(
    timestamp!,
    input.now ?? new Date(),
    input.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  );
  const key = verifyKey(input.publicKey);
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const content = webhookSignedContent(id!, timestamp!, body);
  if (!anySignatureVerifies(signatures!, content, key)) {
    throw new WebhookVerificationError(
      'bad_signature',
      'No v1a signature in webhook-signature verifies with the key for this body.',
    );
  }
  return parseEvent(body);
}

/** A header's value whatever the container: Node's headers, a fetch Headers, or a record in any letter case. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found.join(' ') : found;
}

function checkTimestamp(timestamp: string, now: Date, toleranceSeconds: number): void {
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('bad_timestamp', 'webhook-timestamp is not Unix time in seconds.');
  }
  const offset = Number(timestamp) - now.getTime() / 1000;
  // An old delivery replayed to the callback address is refused (cloud/README.md, "Verifying a delivery").
  if (offset < -toleranceSeconds) {
    throw new WebhookVerificationError('too_old', `The delivery is more than ${toleranceSeconds} s old.`);
  }
  if (offset > toleranceSeconds) {
    throw new WebhookVerificationError(
      'too_new',
      `The delivery is dated more than ${toleranceSeconds} s ahead.`,
    );
  }
}

function verifyKey(publicKey: string | VerifyKey): VerifyKey {
  if (publicKey instanceof VerifyKey) return publicKey;
  try {
    return strictPublicKeyFromBase64(publicKey);
  } catch (error) {
    const why = error instanceof KeyError ? error.message : 'it cannot be read';
    throw new WebhookVerificationError('bad_key', `The public key given is not usable: ${why}.`);
  }
}

/** Standard Webhooks: space-separated `<version>,<signature>`; any `v1a` one that verifies is enough. */
function anySignatureVerifies(header: string, content: Uint8Array, key: VerifyKey): boolean {
  return header
    .split(' ')
    .map((part) => part.split(','))
    .some(([version, signature]) => {
      if (version !== WEBHOOK_SIGNATURE_VERSION || signature === undefined) return false;
      const bytes = decodeBase64(signature);
      return bytes !== null && key.verify(content, bytes);
    });
}

function parseEvent(body: Uint8Array): DeliveredEvent {
  let event: unknown;
  try {
    event = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('not_json', 'The body is not JSON.');
  }
  if (!isEvent(event)) {
    throw new WebhookVerificationError('not_json', 'The body is not an event object {type, id, at, data}.');
  }
  if (!isKnownEvent(event)) return event;
  const checked = eventSchema(event.type).safeParse(event);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WebhookVerificationError(
      'not_json',
      `The body is not a ${event.type} event: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  // The event as sent, fields added later included; the check only vouches for the declared ones.
  return event;
}

function isEvent(value: unknown): value is UnknownWebhookEvent {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.type === 'string' &&
    typeof event.id === 'string' &&
    typeof event.at === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null
  );
}
