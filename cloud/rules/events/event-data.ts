import type { JournalOutcome, RequestState } from '../../foundation/db/schema.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';

/**
 * The `data` of every event kind a company receives at its callback address, declared here and nowhere else.
 * The request and key events are built here, by the functions below, for the transactions that make their
 * change (cloud/rules/requests/claim.ts, cloud/rules/access-keys/access-keys.ts, cloud/rules/access-keys/expiry.ts). The open events are built in the database, in
 * the transaction that journals the opening, by open_event_data (cloud/rules/events/open-event.sql), for open_attempt
 * and complete_entry alike; their fields are declared here all the same, and a test checks that both functions
 * give exactly these. Timestamps are in the company API's form (cloud/README.md, "`status` fields").
 */

/** What a request or key event says of its request: the fields `status` answers with. */
export interface RequestFields {
  code: string;
  ref: string | null;
  state: RequestState;
}

export interface IssuedNumber {
  number_id: number;
  label: string;
}

/** An opening's event: its journal entry, and the key and object it was made with. */
export interface OpenEventData {
  code: string;
  ref: string | null;
  key_ref: number;
  /** null when the object named is not in the key (`forbidden`). */
  number_id: number | null;
  actor: string;
  journal_id: number;
  outcome: JournalOutcome;
  /** Only when the entry has one: a device failure's reason, a late acknowledgement. */
  detail?: string;
}

export interface EventData {
  'request.claimed': RequestFields & { claimed_at: string };
  'request.issued': RequestFields & {
    key_ref: number;
    issued_at: string;
    numbers: IssuedNumber[];
    /** Only when the customer set an end to the access. */
    key_expires_at?: string;
  };
  'request.revoked': RequestFields & { key_ref: number; revoked_at: string };
  'request.expired': RequestFields & { state: 'expired'; expired_at: string };
  'key.expired': RequestFields & { key_ref: number; key_expires_at: string };
  'open.succeeded': OpenEventData;
  'open.failed': OpenEventData;
  /** A test event, sent when a member asks for one in the company area (cloud/faces/company-area/events-routes.tsx). */
  ping: { message: string };
}

export type EventType = keyof EventData;

/** The fields open_event_data gives every open event, whichever function records it; `detail` comes on top. */
export const OPEN_EVENT_FIELDS = Object.keys({
  code: true,
  ref: true,
  key_ref: true,
  number_id: true,
  actor: true,
  journal_id: true,
  outcome: true,
} satisfies Record<Exclude<keyof OpenEventData, 'detail'>, true>);

function requestFields(request: RequestFields): RequestFields {
  return { code: request.code, ref: request.ref, state: request.state };
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

/** A key's own end has passed; the request keeps the state it had. */
export function keyExpired(
  request: RequestFields,
  key: { id: number; expires_at: Date },
): EventData['key.expired'] {
  return { ...requestFields(request), key_ref: key.id, key_expires_at: formatTimestamp(key.expires_at) };
}
