import {
  type EventData,
  type EventKind,
  type OpenEventData,
  openEventDataSchema,
} from '../../../shared/company-api/events.js';
import type { JournalOutcome, RequestState } from '../../foundation/db/schema.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';

/**
 * Builds the `data` of the events a company receives at its callback address. Every kind's fields are declared
 * once, as zod schemas in shared/company-api/events.ts, which the OpenAPI document and the company client read
 * too; the types here are theirs. The request and key events are built here, by the functions below, for the
 * transactions that make their change (cloud/rules/requests/claim.ts, cloud/rules/requests/decline.ts,
 * cloud/rules/requests/release.ts, cloud/rules/access-keys/access-keys.ts, cloud/rules/access-keys/expiry.ts).
 * The open events are built in the database, in the transaction that journals the opening, by open_event_data
 * (cloud/rules/events/open-event.sql), for open_attempt and complete_entry alike; a test checks that both
 * functions give exactly the declared fields. Timestamps are in the company API's form (cloud/README.md, "`status` fields").
 */
export type { EventData, OpenEventData };
export type EventType = EventKind;

/** What a request or key event says of its request: the fields `status` answers with. */
export type RequestFields = Pick<EventData['request.claimed'], 'code' | 'ref' | 'state'>;

export type IssuedNumber = EventData['request.issued']['numbers'][number];

/**
 * What every step event of an opening says of it (docs/design.md section 5.2): the fields of its `open.*` event
 * but the outcome (it was `opened`), so a company finds the opening by `journal_id` or by its own `ref`.
 */
export type GateEventBase = Omit<OpenEventData, 'outcome' | 'detail'>;

/** The database's words and the shared schemas' are the same: a compile error here if either changes alone. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _wordsAgree: [
  Same<JournalOutcome, OpenEventData['outcome']>,
  Same<RequestState, RequestFields['state']>,
] = [true, true];

/** The fields open_event_data gives every open event, whichever function records it; `detail` comes on top. */
export const OPEN_EVENT_FIELDS = Object.keys(openEventDataSchema.shape).filter((field) => field !== 'detail');

function requestFields(request: RequestFields): RequestFields {
  return { code: request.code, ref: request.ref, state: request.state };
}

/** A step time of an opening, as step events give it. */
export function stepTime(at: Date): string {
  return at.toISOString();
}

/** Seconds between two step times, to a tenth, as the customer's journal says them. */
export function secondsBetween(from: Date, to: Date): number {
  return Math.round((to.getTime() - from.getTime()) / 100) / 10;
}

/** A test event: it goes through the outbox, the order and the signature like every other. */
export function ping(): EventData['ping'] {
  return { message: 'A test event from Gatelink: your callback address receives events.' };
}

/** The customer claimed the request (its state now `claimed`). */
export function requestClaimed(request: RequestFields, at: Date): EventData['request.claimed'] {
  return { ...requestFields(request), claimed_at: formatTimestamp(at) };
}

/** The customer granted access: the key, the objects in it, and its end when it has one. */
export function requestIssued(
  request: RequestFields,
  key: { id: number; expiresAt: Date | null; numbers: IssuedNumber[] },
  at: Date,
): EventData['request.issued'] {
  return {
    ...requestFields(request),
    key_ref: key.id,
    issued_at: formatTimestamp(at),
    numbers: key.numbers,
    ...(key.expiresAt ? { key_expires_at: formatTimestamp(key.expiresAt) } : {}),
  };
}

/** The customer withdrew access. */
export function requestRevoked(
  request: RequestFields,
  keyRef: number,
  at: Date,
): EventData['request.revoked'] {
  return { ...requestFields(request), key_ref: keyRef, revoked_at: formatTimestamp(at) };
}

/** The request's lifetime ended before access was granted; it expired when its lifetime did. */
export function requestExpired(
  request: Omit<RequestFields, 'state'> & { expires_at: Date },
): EventData['request.expired'] {
  return {
    code: request.code,
    ref: request.ref,
    state: 'expired',
    expired_at: formatTimestamp(request.expires_at),
  };
}

/** The customer who claimed the request declined it: the company learns only that, and when. */
export function requestDeclined(
  request: Omit<RequestFields, 'state'>,
  at: Date,
): EventData['request.declined'] {
  return { code: request.code, ref: request.ref, state: 'declined', declined_at: formatTimestamp(at) };
}

/** The customer who claimed the request let it go: it is `new` again, for another account to claim. */
export function requestReleased(
  request: Omit<RequestFields, 'state'>,
  at: Date,
): EventData['request.released'] {
  return { code: request.code, ref: request.ref, state: 'new', released_at: formatTimestamp(at) };
}

/** A key's own end has passed; the request keeps the state it had. */
export function keyExpired(
  request: RequestFields,
  key: { id: number; expires_at: Date },
): EventData['key.expired'] {
  return { ...requestFields(request), key_ref: key.id, key_expires_at: formatTimestamp(key.expires_at) };
}
