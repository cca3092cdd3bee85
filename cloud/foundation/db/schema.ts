import type { ColumnType, Generated } from 'kysely';
import type { SandboxOutcomeName } from '../../../shared/company-api/sandbox-calls.js';

/**
 * Table types for kysely; the tables themselves are made by ./migrations. Each column is described again as data
 * in ./schema-columns.ts, which the compiler holds to these types and a test to a migrated database's catalog.
 */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export type CompanyStatus = 'pending' | 'approved' | 'rejected' | 'suspended';
/**
 * A member's role (docs/design.md section 11.1): the owner, who also manages the members; `member`, a developer
 * (API access, the callback address, events, logo and details); `viewer`, who looks and changes nothing.
 */
export type MemberRole = 'owner' | 'member' | 'viewer';
export type RequestState = 'new' | 'claimed' | 'issued' | 'revoked' | 'expired' | 'declined';
export type JournalOutcome =
  | 'opened'
  | 'device_offline'
  | 'device_timeout'
  | 'device_error'
  | 'revoked'
  | 'expired'
  | 'rate_limit'
  | 'forbidden'
  | 'not_started'
  | 'outside_hours'
  | 'openings_used'
  | 'denied'
  | 'not_answered';

export interface CompaniesTable {
  id: Generated<number>;
  name: string;
  domain: string | null;
  contact_email: string | null;
  status: ColumnType<CompanyStatus, CompanyStatus | undefined, CompanyStatus>;
  key_pub: string | null;
  key_confirmed_at: Timestamp | null;
  key_checked_at: Timestamp | null;
  key_check_error: string | null;
  key_seen_other: string | null;
  created_at: DefaultTimestamp;
  approved_at: Timestamp | null;
  suspended_at: Timestamp | null;
  /** Why an operator rejected or suspended the company; the company reads it in its area. */
  status_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The key last fetched from the domain before approval (not pinned), for the operator to check. */
  key_published: ColumnType<string | null, string | null | undefined, string | null>;
  key_published_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The key whose private half the registrant proved to hold (section 11.1). */
  key_proven: ColumnType<string | null, string | null | undefined, string | null>;
  callback_url: ColumnType<string | null, string | null | undefined, string | null>;
  logo_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** The callback endpoint's state (docs/design.md section 6): failing since when, for which address, why. */
  callback_failing_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  callback_failing_url: ColumnType<string | null, string | null | undefined, string | null>;
  callback_last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** No delivery to the company before this, after a failed attempt. */
  callback_paused_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** A delivery worker has the company's events until this. */
  callback_lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The kinds of event the callback takes (migration 0033); null for every kind. */
  callback_kinds: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** For a company's sandbox (docs/design.md section 11.9), the company it is the sandbox of; null for any other. */
  sandbox_of: ColumnType<number | null, number | null | undefined, number | null>;
}

/** What a sandbox's outcome makes of its next openings (docs/design.md section 11.9). */
export type SandboxOutcome = SandboxOutcomeName;

/** What the cloud simulates for a company's sandbox (docs/design.md section 11.9), by the sandbox company. */
export interface SandboxesTable {
  company_id: number;
  /** The simulated customer, who grants and withdraws as the company's developer says. */
  customer_id: number;
  /** The barrier the cloud runs as its controller. */
  device_id: string;
  /** That controller's Ed25519 private key, sealed (cloud/foundation/web/sealing.ts). */
  device_key: string;
  outcome: ColumnType<SandboxOutcome, SandboxOutcome | undefined, SandboxOutcome>;
  created_at: Timestamp;
}

export interface CompanyLogosTable {
  hash: string;
  image: Uint8Array;
  created_at: Timestamp;
}

export interface CompanyMembersTable {
  id: Generated<number>;
  company_id: number;
  /** The address the member was added by; null for an owner whose account has none confirmed. */
  email: string | null;
  /** The account acting for the company; null until the account holding `email` signs in. */
  customer_id: number | null;
  role: MemberRole;
  added_at: Timestamp;
  added_by: number | null;
}

export interface OperatorsTable {
  customer_id: number;
  added_at: Timestamp;
  added_by: string;
}

export interface OperatorSessionsTable {
  id_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface OperatorActionsTable {
  id: Generated<number>;
  at: Timestamp;
  /** Who, as shown: an operator's name and address, or the operator token. */
  operator: string;
  customer_id: number | null;
  company_id: number | null;
  action: string;
  reason: string | null;
}

/** A change a member made in the company area (migration 0029; docs/design.md section 11.8). */
export interface MemberActionsTable {
  id: Generated<string>;
  company_id: number;
  at: Timestamp;
  customer_id: number | null;
  /** Who, as shown when they acted: "Ann <ann@example.com>". */
  member: string;
  action: MemberActionName;
  /** What the action concerned: a member's address, a callback address, an event's id, a key's fingerprint. */
  detail: string | null;
  /** Done in the company's sandbox (migration 0035; docs/design.md section 11.9). */
  sandbox: Generated<boolean>;
}

/** What the record of a company's members names (cloud/rules/member-actions/member-actions.ts). */
export type MemberActionName =
  | 'registered'
  | 'details'
  | 'asked-again'
  | 'key-checked'
  | 'key-proven'
  | 'key-rotation-confirmed'
  | 'secret-issued'
  | 'sandbox-secret-issued'
  | 'secret-expired'
  | 'endpoint-added'
  | 'callback-saved'
  | 'callback-removed'
  | 'callback-kinds'
  | 'signing-secret-made'
  | 'signing-secret-expired'
  | 'test-event'
  | 'event-resent'
  | 'retry-now'
  | 'logo-saved'
  | 'logo-removed'
  | 'member-added'
  | 'member-removed'
  | 'member-role'
  | 'owner-transferred'
  | 'sandbox-granted'
  | 'sandbox-withdrawn'
  | 'sandbox-outcome';

export interface CompanySecretsTable {
  id: Generated<number>;
  company_id: number;
  hash: string;
  hint: string;
  created_at: DefaultTimestamp;
  retires_at: Timestamp | null;
}

/** A company's callback signing secrets (docs/design.md section 6): sealed, since every delivery signs with them. */
export interface CallbackSecretsTable {
  id: Generated<number>;
  company_id: number;
  /** The endpoint it signs for (migration 0036); a previous release's insert gets the first endpoint. */
  endpoint_id: ColumnType<number | null, number | null | undefined, number | null>;
  sealed: string;
  hint: string;
  created_at: DefaultTimestamp;
  retires_at: Timestamp | null;
}

export interface NoncesTable {
  company_id: number;
  nonce: string;
  seen_at: DefaultTimestamp;
}

export interface CustomersTable {
  id: Generated<number>;
  display_name: string;
  email: string | null;
  created_at: DefaultTimestamp;
  email_verified_at: Timestamp | null;
  /** The IANA zone the customer reads times in; null until proposed or chosen, read as UTC. */
  time_zone: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionsTable {
  id_hash: string;
  customer_id: number;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
}

export interface PasskeysTable {
  id: Generated<number>;
  customer_id: number;
  credential_id: string;
  public_key: string;
  counter: ColumnType<number, number | undefined, number>;
  transports: ColumnType<string[], string | undefined, string>;
  name: string;
  device_type: string;
  backed_up: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

export type ChallengePurpose = 'sign_up' | 'sign_in' | 'add';

export interface WebauthnChallengesTable {
  id: string;
  challenge: string;
  purpose: ChallengePurpose;
  customer_id: number | null;
  display_name: string | null;
  expires_at: Timestamp;
}

export interface EmailCodesTable {
  id: Generated<number>;
  email: string;
  code_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  attempts: ColumnType<number, number | undefined, number>;
}

export interface RateCountersTable {
  bucket: string;
  key: string;
  window_start: Timestamp;
  count: number;
}

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: DefaultTimestamp;
}

export interface ServiceKeyTable {
  id: number;
  public_key: string;
  recorded_at: DefaultTimestamp;
}

export interface DevicesTable {
  id: string;
  label: string;
  customer_id: number | null;
  public_key: string | null;
  mqtt_password_hash: string | null;
  provisioning_code_hash: string | null;
  provisioning_expires_at: Timestamp | null;
  provisioned_at: Timestamp | null;
  pairing_code: string | null;
  pairing_expires_at: Timestamp | null;
  online: ColumnType<boolean, boolean | undefined, boolean>;
  state_at: Timestamp | null;
  version: string | null;
  /** The processor architecture the controller reports (process.arch); null until its first report. */
  arch: ColumnType<string | null, string | null | undefined, string | null>;
  telemetry: Json<unknown> | null;
  telemetry_at: Timestamp | null;
  created_at: DefaultTimestamp;
  /** The customer's own name for the barrier; the installer's `label` until they give one. */
  name: string | null;
  paired_at: Timestamp | null;
  /** How long the gate may stay open before the customer and the company are told (docs/design.md section 5.2). */
  left_open_limit_s: ColumnType<number, number | undefined, number>;
  /** How soon after the relay fired the gate must be seen moving, else the entry says it did not move. */
  move_timeout_s: ColumnType<number, number | undefined, number>;
  /** The barrier's IANA time zone: its keys' hours are read in it (docs/design.md section 3.1). */
  time_zone: ColumnType<string, string | undefined, string>;
  /**
   * The account a waiting provisioning code is bound to: a customer setting up their own phone as the controller
   * (docs/design.md section 9.3). Provisioning pairs the controller to it and clears it.
   */
  setup_customer_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface DeviceObjectsTable {
  id: Generated<number>;
  device_id: string;
  local_id: string;
  label: string;
  kind: string;
  removed_at: Timestamp | null;
  /** Whether the controller reports a position sensor on the object (docs/design.md section 7.5). */
  has_sensor: ColumnType<boolean, boolean | undefined, boolean>;
  position: ColumnType<GatePosition | null, GatePosition | null | undefined, GatePosition | null>;
  /** When the gate took `position`, on the controller's clock. */
  position_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The signed report that says so. */
  position_report: ColumnType<unknown | null, string | null | undefined, string | null>;
  /** When the customer and the company were told that the gate stays open; cleared when it closes. */
  left_open_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The journal entry whose opening left the gate open, when one did. */
  left_open_entry: ColumnType<number | null, number | null | undefined, number | null>;
  /** On a `phone` object, the number its phone dials (docs/design.md section 10.9). */
  gate_number: ColumnType<string | null, string | null | undefined, string | null>;
}

export type GatePosition = 'open' | 'closed';

export interface RequestsTable {
  id: Generated<number>;
  code: string;
  company_id: number;
  ref: string | null;
  ttl_hours: number;
  state: ColumnType<RequestState, RequestState | undefined, RequestState>;
  created_at: DefaultTimestamp;
  expires_at: Timestamp;
  claimed_at: Timestamp | null;
  issued_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expired_at: Timestamp | null;
  customer_id: number | null;
  /** When the customer who claimed the request declined it (docs/design.md section 10.3). */
  declined_at: Timestamp | null;
  /** What the company proposed in `request` (shared/company-api/grant-shape.ts), as sent; null when nothing. */
  proposed_shape: ColumnType<unknown, string | null | undefined, string | null>;
  /** The household member who passed the claimed request to its present holder; null when not passed. */
  handed_by: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface KeysTable {
  id: Generated<number>;
  request_id: number;
  company_id: number;
  customer_id: number;
  device_id: string;
  issued_at: DefaultTimestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expiry_recorded_at: Timestamp | null;
  /** The shape of the grant (docs/design.md section 3.1): a delayed start, hours of the week, openings in all. */
  starts_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  windows: ColumnType<unknown, string | null | undefined, string | null>;
  openings_allowed: ColumnType<number | null, number | null | undefined, number | null>;
  /** "Ask me before each opening" (docs/design.md section 10.8): how long an `open` waits for an answer. */
  ask_first_s: ColumnType<number | null, number | null | undefined, number | null>;
}

export type QuestionAnswer = 'allowed' | 'denied' | 'called' | 'unanswered';

/** "Ask me first" (`allow`, section 10.8), or "call the gate" while a phone's controller is offline (section 10.9). */
export type QuestionKind = 'allow' | 'call';

/** An opening asked about (docs/design.md section 10.8), by its journal entry; answered once. */
export interface OpeningQuestionsTable {
  journal_id: number;
  device_id: string;
  asked_at: Timestamp;
  answer_by: Timestamp;
  kind: ColumnType<QuestionKind, QuestionKind | undefined, QuestionKind>;
  answer: QuestionAnswer | null;
  answered_by: number | null;
  answered_at: Timestamp | null;
}

/** One act on a barrier's access (docs/design.md section 10.4); `customer_id` null: none of its customers. */
export interface AccessHistoryTable {
  id: Generated<number>;
  device_id: string;
  at: Timestamp;
  customer_id: number | null;
  act: AccessAct;
  key_id: number;
  company_id: number;
}

export type AccessAct = 'granted' | 'withdrawn' | 'reshaped';

/** Someone the owner shares a barrier with (docs/design.md section 9.2). */
export interface BarrierMembersTable {
  device_id: string;
  customer_id: number;
  /** Whether the member may grant requests to the barrier and withdraw or reshape its keys. */
  may_grant: boolean;
  added_by: number;
  joined_at: Timestamp;
}

/** An invitation to a barrier's household, waiting for its address to sign in and accept it. */
export interface BarrierInvitationsTable {
  id: Generated<number>;
  device_id: string;
  /** The invited address, as accounts keep theirs (lower case). */
  email: string;
  may_grant: boolean;
  token_hash: string;
  invited_by: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: number | null;
  withdrawn_at: Timestamp | null;
}

export interface KeyObjectsTable {
  key_id: number;
  object_id: number;
}

export interface JournalTable {
  id: Generated<number>;
  at: DefaultTimestamp;
  device_id: string | null;
  object_id: number | null;
  company_id: number;
  key_id: number;
  actor: string;
  /** null while the command is in flight. */
  outcome: JournalOutcome | null;
  detail: string | null;
  command_id: string | null;
  acked_at: Timestamp | null;
  /** The controller's signed acknowledgement, as received (docs/design.md section 5.3). */
  ack: ColumnType<unknown | null, string | null | undefined, string | null>;
  /** When the gate was seen open after this opening, on the controller's clock. */
  gate_opened_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  gate_closed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the cloud marked the entry "relay fired, gate did not move". */
  gate_not_moved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the gate this opening opened was found left open past the barrier's limit. */
  left_open_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The signed position reports that prove the steps above, oldest first. */
  gate_reports: ColumnType<unknown[] | null, string | null | undefined, string | null>;
  /** The entry's place in its barrier's hash chain (docs/design.md section 5.3); null until the entry is final. */
  /** The customer whose chain holds the entry (the key's owner when it was sealed). */
  chain_customer: ColumnType<number | null, number | null | undefined, number | null>;
  chain_seq: ColumnType<number | null, number | null | undefined, number | null>;
  chain_prev: ColumnType<string | null, string | null | undefined, string | null>;
  chain_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A barrier's hash chain: its head, and the latest check of it (docs/design.md section 5.3). */
export interface JournalChainsTable {
  device_id: string;
  customer_id: number;
  /** The `prev` of the chain's first entry, fixed when the chain starts (the barrier's id may change later). */
  genesis: string;
  seq: ColumnType<number, number | undefined, number>;
  hash: string;
  checked_at: Timestamp | null;
  checked_seq: number | null;
  broken_entry: number | null;
  broken_reason: string | null;
  /** The public keys of the controllers whose acknowledgements and reports the chain holds, by device id. */
  device_keys: ColumnType<Record<string, string>, string | undefined, string>;
  /** When the chain was last checked from its genesis: an edit to an entry checked earlier shows only so. */
  full_checked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** A retired controller's public key, kept for the receipts of its acknowledgements (docs/design.md section 5.3). */
export interface RetiredDeviceKeysTable {
  device_id: string;
  public_key: string;
  retired_at: Timestamp;
}

export interface IdempotencyTable {
  company_id: number;
  action: string;
  key: string;
  body_hash: string;
  status: number | null;
  response: Json<unknown> | null;
  created_at: DefaultTimestamp;
  /** `open` only: the command the claimed call sent, set with the claim. */
  command_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface EventsTable {
  id: string;
  company_id: number;
  type: string;
  data: Json<unknown>;
  at: DefaultTimestamp;
  delivered_at: Timestamp | null;
  /** Every attempt made, for the delivery log's numbers. */
  attempts: ColumnType<number, number | undefined, number>;
  /** `attempts` when the retry schedule last began: the schedule reads the difference (migration 0023). */
  schedule_from: ColumnType<number, number | undefined, number>;
  next_attempt_at: DefaultTimestamp;
  /** The order events were written in (docs/design.md section 6). */
  seq: Generated<string>;
  /**
   * Whether the callback gets it whatever the company's kinds (migration 0033): null as written, false when
   * passed over as the kinds changed, true when a member asked to have it sent.
   */
  to_callback: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
}

/** One of a company's callback addresses (docs/design.md section 6.2), with its delivery state. */
export interface EndpointsTable {
  id: Generated<number>;
  company_id: number;
  url: string;
  /** The kinds of event it takes; null for every kind. */
  kinds: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  created_at: DefaultTimestamp;
  /** Failing since when, for which address, and why: nothing is sent until the address changes or a retry. */
  failing_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  failing_url: ColumnType<string | null, string | null | undefined, string | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** No delivery before this, after a failed attempt. */
  paused_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** A delivery worker has the endpoint's events until this. */
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** Where an event stands with an endpoint that takes it (migration 0036): made as the event is written. */
export interface EndpointEventsTable {
  endpoint_id: number;
  event_id: string;
  /** The event's `seq`: the endpoint's deliveries keep the order events were written in. */
  seq: string;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  /** `attempts` when the retry schedule last began ("Retry now", a resend, a resumed endpoint). */
  schedule_from: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** A member asked for it by name ("Send again", "Send it anyway"): a change of kinds leaves it. */
  asked: ColumnType<boolean, boolean | undefined, boolean>;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'failing';

/** One attempt to deliver an event (docs/design.md section 6), the company's delivery log. */
export interface EventDeliveriesTable {
  id: Generated<string>;
  company_id: number;
  /** The endpoint it was made to (migration 0036); null on a previous release's attempts. */
  endpoint_id: ColumnType<number | null, number | null | undefined, number | null>;
  event_id: string;
  type: string;
  attempt: number;
  at: Timestamp;
  url: string;
  outcome: DeliveryOutcome;
  status: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: Timestamp | null;
  /** The headers sent, by name (migration 0026); null on earlier attempts. */
  sent_headers: Json<Record<string, string>> | null;
  /** The answer's headers and first KiB (cloud/links/outbound-http/public-post.ts); null when none came. */
  answer: Json<AttemptAnswer> | null;
}

/** What an attempt's log row keeps of its answer. */
export interface AttemptAnswer {
  headers: [string, string][];
  body: string;
  cut: boolean;
}

/** What a company's members are e-mailed about (docs/design.md section 11.7). */
export type CompanyMailKind = 'approved' | 'rejected' | 'endpoint_failing';

/** One e-mail to one member of a company, until sent or given up (migration 0027). */
export interface CompanyMailsTable {
  id: Generated<string>;
  company_id: number;
  /** The endpoint an `endpoint_failing` e-mail tells of (migration 0036); null for other kinds. */
  endpoint_id: ColumnType<number | null, number | null | undefined, number | null>;
  customer_id: number;
  kind: CompanyMailKind;
  /** What the e-mail tells beyond its kind: the reason of a refusal, the failing address's last error. */
  detail: string | null;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  sent_at: Timestamp | null;
  gave_up_at: Timestamp | null;
  last_error: string | null;
}

/** A browser a customer turned notifications on in (docs/design.md section 10.6). */
export interface PushSubscriptionsTable {
  id: Generated<number>;
  customer_id: number;
  endpoint: string;
  /** The browser's P-256 public key and auth secret, base64url, that payloads are encrypted to (RFC 8291). */
  p256dh: string;
  auth: string;
  name: string;
  created_at: Timestamp;
  last_delivered_at: Timestamp | null;
}

/**
 * What a notice is of (docs/design.md section 10.7): an opening, a question before one (reserved), a gate left
 * open or closed again, a change of access by someone else. Each has one subject column in the outboxes.
 */
export type NoticeKind = 'opening' | 'question' | 'left_open' | 'closed_again' | 'access_change';

/** The subject columns of a notice row, exactly one set, as its kind says (migration 0021). */
export interface NoticeSubjectColumns {
  kind: ColumnType<NoticeKind, NoticeKind | undefined, NoticeKind>;
  /** `opening` and `question`. */
  journal_id: number | null;
  /** `left_open` and `closed_again`. */
  gate_alert_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** `access_change`: the barrier's key history row. */
  history_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** One notice to one subscription, until sent or given up (docs/design.md sections 10.6 and 10.7). */
export interface PushOutboxTable extends NoticeSubjectColumns {
  id: Generated<string>;
  subscription_id: number;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  sent_at: Timestamp | null;
  gave_up_at: Timestamp | null;
  last_error: string | null;
}

/** How far the push fan-out has read the journal: one row. */
export interface PushJournalCursorTable {
  only_row: ColumnType<boolean, boolean | undefined, never>;
  last_entry_id: number;
}

/** What a person is told of a barrier's openings (docs/design.md section 10.7): every one, refusals only, none. */
export type NotificationTell = 'every' | 'refused' | 'none';

/** A person's choice of what they are told of one barrier; no row is every opening, no e-mail. */
export interface NotificationChoicesTable {
  device_id: string;
  customer_id: number;
  tell: NotificationTell;
  /** An e-mail for each entry told; wins over `email_digest` (migration 0020). */
  by_email: boolean;
  updated_at: Timestamp;
  /** Quiet hours, 'HH:MM' in the person's account zone, both or neither (docs/design.md section 10.7). */
  quiet_from: string | null;
  quiet_until: string | null;
  /** One e-mail a day of the entries told (the daily digest). */
  email_digest: ColumnType<boolean, boolean | undefined, boolean>;
  /** Whether they are told of a gate left open and closed again (migration 0021; on by default). */
  left_open: ColumnType<boolean, boolean | undefined, boolean>;
  /** Whether they are told of access granted, changed or withdrawn by someone else of the household. */
  access_changes: ColumnType<boolean, boolean | undefined, boolean>;
}

/**
 * A gate the sweep marked left open (docs/design.md section 10.7), with the household's opening that left it
 * open if one did, until it closed: what its notices tell.
 */
export interface GateAlertsTable {
  id: Generated<number>;
  device_id: string;
  object_id: number;
  journal_id: number | null;
  open_since: Timestamp;
  left_open_at: Timestamp;
  closed_at: Timestamp | null;
}

/** One person's digest of one local day (docs/design.md section 10.7), until sent, found empty or given up. */
export interface MailDigestsTable {
  id: Generated<string>;
  customer_id: number;
  /** The local day covered, 'YYYY-MM-DD' in the person's account zone. */
  day: string;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  sent_at: Timestamp | null;
  gave_up_at: Timestamp | null;
  last_error: string | null;
  /** Entries the digest told; 0 when the day had none and nothing was sent. */
  lines: number | null;
}

/** One notice to e-mail one person, until sent or given up (docs/design.md section 10.7). */
export interface OpeningMailOutboxTable extends NoticeSubjectColumns {
  id: Generated<string>;
  customer_id: number;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  sent_at: Timestamp | null;
  gave_up_at: Timestamp | null;
  last_error: string | null;
}

export type RolloutTargetKind = 'all' | 'percent' | 'devices';
export type RolloutState = 'running' | 'paused' | 'halted' | 'finished';
export type DeviceUpdateState =
  | 'pending'
  | 'sent'
  | 'downloading'
  | 'switched'
  | 'healthy'
  | 'rolled_back'
  | 'refused'
  | 'failed';

/** A bundle the operator uploaded (docs/design.md section 12.4.2); its bytes are in `release_chunks`. */
export interface ReleasesTable {
  id: Generated<number>;
  version: string;
  arch: string;
  node_abi: string;
  sha256: string;
  /** Bytes, as decimal text (bigint). */
  size: ColumnType<string, string | number, string | number>;
  /** The signed manifest as uploaded: {manifest, sig}. */
  manifest: Json<unknown>;
  created_at: DefaultTimestamp;
}

export interface ReleaseChunksTable {
  release_id: number;
  seq: number;
  data: Uint8Array;
}

export interface RolloutsTable {
  id: Generated<number>;
  release_id: number;
  target_kind: RolloutTargetKind;
  percent: number | null;
  allow_downgrade: boolean;
  max_rollback_share: number;
  state: RolloutState;
  halted_reason: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface DeviceUpdatesTable {
  rollout_id: number;
  device_id: string;
  state: DeviceUpdateState;
  reason: string | null;
  detail: string | null;
  sent_at: Timestamp | null;
  updated_at: DefaultTimestamp;
}

export interface DB {
  companies: CompaniesTable;
  company_secrets: CompanySecretsTable;
  sandboxes: SandboxesTable;
  callback_secrets: CallbackSecretsTable;
  endpoints: EndpointsTable;
  endpoint_events: EndpointEventsTable;
  nonces: NoncesTable;
  customers: CustomersTable;
  devices: DevicesTable;
  device_objects: DeviceObjectsTable;
  requests: RequestsTable;
  keys: KeysTable;
  opening_questions: OpeningQuestionsTable;
  key_objects: KeyObjectsTable;
  access_history: AccessHistoryTable;
  barrier_members: BarrierMembersTable;
  barrier_invitations: BarrierInvitationsTable;
  journal: JournalTable;
  journal_chains: JournalChainsTable;
  retired_device_keys: RetiredDeviceKeysTable;
  idempotency: IdempotencyTable;
  events: EventsTable;
  event_deliveries: EventDeliveriesTable;
  company_mails: CompanyMailsTable;
  sessions: SessionsTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  email_codes: EmailCodesTable;
  rate_counters: RateCountersTable;
  server_secrets: ServerSecretsTable;
  service_key: ServiceKeyTable;
  company_logos: CompanyLogosTable;
  company_members: CompanyMembersTable;
  operators: OperatorsTable;
  operator_sessions: OperatorSessionsTable;
  operator_actions: OperatorActionsTable;
  member_actions: MemberActionsTable;
  releases: ReleasesTable;
  release_chunks: ReleaseChunksTable;
  rollouts: RolloutsTable;
  device_updates: DeviceUpdatesTable;
  push_subscriptions: PushSubscriptionsTable;
  push_outbox: PushOutboxTable;
  push_journal_cursor: PushJournalCursorTable;
  notification_choices: NotificationChoicesTable;
  opening_mail_outbox: OpeningMailOutboxTable;
  gate_alerts: GateAlertsTable;
  mail_digests: MailDigestsTable;
}
