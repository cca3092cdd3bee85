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

/**
 * What every step event of an opening says of it (docs/design.md section 5.2): the fields of its `open.*` event
 * but the outcome (it was `opened`), so a company finds the opening by `journal_id` or by its own `ref`.
 * Step times are ISO 8601 with milliseconds, not the company API's seconds: "gate open after 1.8 s" needs them.
 */
export type GateEventBase = Omit<OpenEventData, 'outcome' | 'detail'>;

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
  /** The gate was seen open after the relay fired (`relay_at`, the acknowledgement's time). */
  'open.gate_opened': GateEventBase & { relay_at: string; opened_at: string };
  /** The gate this opening opened was seen closed again, `open_for_s` seconds after it opened. */
  'open.gate_closed': GateEventBase & {
    relay_at: string;
    opened_at: string;
    closed_at: string;
    open_for_s: number;
  };
  /** The relay fired, but the gate was not seen moving within the barrier's `limit_s`. */
  'open.gate_not_moved': GateEventBase & { relay_at: string; not_moved_at: string; limit_s: number };
  /** The gate this opening opened has stayed open past the customer's limit for the barrier (`limit_s`). */
  'gate.left_open': GateEventBase & { opened_at: string; left_open_at: string; limit_s: number };
  /** The gate of a `gate.left_open` closed at last. */
  'gate.closed': GateEventBase & {
    opened_at: string;
    left_open_at: string;
    closed_at: string;
    open_for_s: number;
  };
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

/** A key's own end has passed; the request keeps the state it had. */
export function keyExpired(
  request: RequestFields,
  key: { id: number; expires_at: Date },
): EventData['key.expired'] {
  return { ...requestFields(request), key_ref: key.id, key_expires_at: formatTimestamp(key.expires_at) };
}
