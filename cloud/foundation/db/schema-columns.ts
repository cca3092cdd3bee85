import type { Selectable } from 'kysely';
import type { DB } from './schema.js';

/**
 * The tables of ./schema.ts as data: every column with its SQL type as information_schema names it, and
 * `| null` where the column may be null. schema.ts types the tables by hand for kysely, and those types are
 * erased at run time; this description is what a test compares with a migrated database's catalog
 * (test/cloud/schema-catalog.test.ts), and the compiler holds it to schema.ts below: a column in one and not the
 * other, or a column whose type or nullability differs, fails `tsc`. So a migration and schema.ts cannot drift
 * apart: a column added to one only fails either the type check or the test.
 */

/** What each SQL type reads as through both drivers (a bigint as its decimal text). */
interface ReadAs {
  integer: number;
  bigint: string;
  'double precision': number;
  text: string;
  'character varying': string;
  boolean: boolean;
  'timestamp with time zone': Date;
  uuid: string;
  bytea: Uint8Array;
  jsonb: unknown;
  /** information_schema's name for any array; the schema has text arrays only. */
  ARRAY: string[];
}

export type SqlTypeName = keyof ReadAs;
export type SqlColumn = SqlTypeName | `${SqlTypeName} | null`;

type Description = { readonly [T in keyof DB]: { readonly [C in keyof DB[T]]-?: SqlColumn } };

export const TABLE_COLUMNS = {
  companies: {
    id: 'integer',
    name: 'text',
    domain: 'text | null',
    contact_email: 'text | null',
    status: 'text',
    key_pub: 'text | null',
    key_confirmed_at: 'timestamp with time zone | null',
    key_checked_at: 'timestamp with time zone | null',
    key_check_error: 'text | null',
    key_seen_other: 'text | null',
    created_at: 'timestamp with time zone',
    approved_at: 'timestamp with time zone | null',
    suspended_at: 'timestamp with time zone | null',
    status_reason: 'text | null',
    key_published: 'text | null',
    key_published_at: 'timestamp with time zone | null',
    key_proven: 'text | null',
    callback_url: 'text | null',
    logo_hash: 'text | null',
    callback_failing_since: 'timestamp with time zone | null',
    callback_failing_url: 'text | null',
    callback_last_error: 'text | null',
    callback_paused_until: 'timestamp with time zone | null',
    callback_lease_until: 'timestamp with time zone | null',
    callback_kinds: 'ARRAY | null',
    sandbox_of: 'integer | null',
  },
  sandboxes: {
    company_id: 'integer',
    customer_id: 'integer',
    device_id: 'text',
    device_key: 'text',
    outcome: 'text',
    created_at: 'timestamp with time zone',
  },
  company_secrets: {
    id: 'integer',
    company_id: 'integer',
    hash: 'text',
    hint: 'text',
    created_at: 'timestamp with time zone',
    retires_at: 'timestamp with time zone | null',
  },
  callback_secrets: {
    id: 'integer',
    company_id: 'integer',
    endpoint_id: 'integer | null',
    sealed: 'text',
    hint: 'text',
    created_at: 'timestamp with time zone',
    retires_at: 'timestamp with time zone | null',
  },
  nonces: {
    company_id: 'integer',
    nonce: 'text',
    seen_at: 'timestamp with time zone',
  },
  customers: {
    id: 'integer',
    display_name: 'text',
    email: 'text | null',
    created_at: 'timestamp with time zone',
    email_verified_at: 'timestamp with time zone | null',
    time_zone: 'text | null',
  },
  devices: {
    id: 'text',
    label: 'text',
    customer_id: 'integer | null',
    public_key: 'text | null',
    mqtt_password_hash: 'text | null',
    provisioning_code_hash: 'text | null',
    provisioning_expires_at: 'timestamp with time zone | null',
    provisioned_at: 'timestamp with time zone | null',
    pairing_code: 'text | null',
    pairing_expires_at: 'timestamp with time zone | null',
    online: 'boolean',
    state_at: 'timestamp with time zone | null',
    version: 'text | null',
    arch: 'text | null',
    telemetry: 'jsonb | null',
    telemetry_at: 'timestamp with time zone | null',
    created_at: 'timestamp with time zone',
    name: 'text | null',
    paired_at: 'timestamp with time zone | null',
    left_open_limit_s: 'integer',
    move_timeout_s: 'integer',
    time_zone: 'text',
    setup_customer_id: 'integer | null',
  },
  device_objects: {
    id: 'integer',
    device_id: 'text',
    local_id: 'text',
    label: 'text',
    kind: 'text',
    removed_at: 'timestamp with time zone | null',
    has_sensor: 'boolean',
    position: 'text | null',
    position_since: 'timestamp with time zone | null',
    position_report: 'jsonb | null',
    left_open_at: 'timestamp with time zone | null',
    left_open_entry: 'integer | null',
    gate_number: 'text | null',
  },
  requests: {
    id: 'integer',
    code: 'text',
    company_id: 'integer',
    ref: 'text | null',
    ttl_hours: 'integer',
    state: 'text',
    created_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone',
    claimed_at: 'timestamp with time zone | null',
    issued_at: 'timestamp with time zone | null',
    revoked_at: 'timestamp with time zone | null',
    expired_at: 'timestamp with time zone | null',
    customer_id: 'integer | null',
    proposed_shape: 'jsonb | null',
    handed_by: 'integer | null',
    declined_at: 'timestamp with time zone | null',
  },
  keys: {
    id: 'integer',
    request_id: 'integer',
    company_id: 'integer',
    customer_id: 'integer',
    device_id: 'text',
    issued_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone | null',
    revoked_at: 'timestamp with time zone | null',
    expiry_recorded_at: 'timestamp with time zone | null',
    starts_at: 'timestamp with time zone | null',
    windows: 'jsonb | null',
    openings_allowed: 'integer | null',
    ask_first_s: 'integer | null',
  },
  opening_questions: {
    journal_id: 'integer',
    device_id: 'text',
    asked_at: 'timestamp with time zone',
    answer_by: 'timestamp with time zone',
    kind: 'text',
    answer: 'text | null',
    answered_by: 'integer | null',
    answered_at: 'timestamp with time zone | null',
  },
  barrier_members: {
    device_id: 'text',
    customer_id: 'integer',
    may_grant: 'boolean',
    added_by: 'integer',
    joined_at: 'timestamp with time zone',
  },
  barrier_invitations: {
    id: 'integer',
    device_id: 'text',
    email: 'text',
    may_grant: 'boolean',
    token_hash: 'text',
    invited_by: 'integer',
    created_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone',
    accepted_at: 'timestamp with time zone | null',
    accepted_by: 'integer | null',
    withdrawn_at: 'timestamp with time zone | null',
  },
  access_history: {
    id: 'integer',
    device_id: 'text',
    at: 'timestamp with time zone',
    customer_id: 'integer | null',
    act: 'text',
    key_id: 'integer',
    company_id: 'integer',
  },
  key_objects: {
    key_id: 'integer',
    object_id: 'integer',
  },
  journal: {
    id: 'integer',
    at: 'timestamp with time zone',
    device_id: 'text | null',
    object_id: 'integer | null',
    company_id: 'integer',
    key_id: 'integer',
    actor: 'text',
    outcome: 'text | null',
    detail: 'text | null',
    command_id: 'uuid | null',
    acked_at: 'timestamp with time zone | null',
    ack: 'jsonb | null',
    gate_opened_at: 'timestamp with time zone | null',
    gate_closed_at: 'timestamp with time zone | null',
    gate_not_moved_at: 'timestamp with time zone | null',
    left_open_at: 'timestamp with time zone | null',
    gate_reports: 'jsonb | null',
    chain_customer: 'integer | null',
    chain_seq: 'integer | null',
    chain_prev: 'text | null',
    chain_hash: 'text | null',
  },
  journal_chains: {
    device_id: 'text',
    customer_id: 'integer',
    genesis: 'text',
    seq: 'integer',
    hash: 'text',
    checked_at: 'timestamp with time zone | null',
    checked_seq: 'integer | null',
    broken_entry: 'integer | null',
    broken_reason: 'text | null',
    device_keys: 'jsonb',
    full_checked_at: 'timestamp with time zone | null',
  },
  retired_device_keys: {
    device_id: 'text',
    public_key: 'text',
    retired_at: 'timestamp with time zone',
  },
  idempotency: {
    company_id: 'integer',
    action: 'text',
    key: 'text',
    body_hash: 'text',
    status: 'integer | null',
    response: 'jsonb | null',
    created_at: 'timestamp with time zone',
    command_id: 'uuid | null',
  },
  events: {
    id: 'uuid',
    company_id: 'integer',
    type: 'text',
    data: 'jsonb',
    at: 'timestamp with time zone',
    delivered_at: 'timestamp with time zone | null',
    attempts: 'integer',
    schedule_from: 'integer',
    next_attempt_at: 'timestamp with time zone',
    seq: 'bigint',
    to_callback: 'boolean | null',
  },
  endpoints: {
    id: 'integer',
    company_id: 'integer',
    url: 'text',
    kinds: 'ARRAY | null',
    created_at: 'timestamp with time zone',
    failing_since: 'timestamp with time zone | null',
    failing_url: 'text | null',
    last_error: 'text | null',
    paused_until: 'timestamp with time zone | null',
    lease_until: 'timestamp with time zone | null',
  },
  endpoint_events: {
    endpoint_id: 'integer',
    event_id: 'uuid',
    seq: 'bigint',
    delivered_at: 'timestamp with time zone | null',
    attempts: 'integer',
    schedule_from: 'integer',
    next_attempt_at: 'timestamp with time zone | null',
    asked: 'boolean',
  },
  event_deliveries: {
    id: 'bigint',
    company_id: 'integer',
    endpoint_id: 'integer | null',
    event_id: 'uuid',
    type: 'text',
    attempt: 'integer',
    at: 'timestamp with time zone',
    url: 'text',
    outcome: 'text',
    status: 'integer | null',
    error: 'text | null',
    duration_ms: 'integer',
    next_attempt_at: 'timestamp with time zone | null',
    sent_headers: 'jsonb | null',
    answer: 'jsonb | null',
  },
  company_mails: {
    id: 'bigint',
    company_id: 'integer',
    endpoint_id: 'integer | null',
    customer_id: 'integer',
    kind: 'text',
    detail: 'text | null',
    created_at: 'timestamp with time zone',
    attempts: 'integer',
    next_attempt_at: 'timestamp with time zone',
    locked_until: 'timestamp with time zone | null',
    sent_at: 'timestamp with time zone | null',
    gave_up_at: 'timestamp with time zone | null',
    last_error: 'text | null',
  },
  sessions: {
    id_hash: 'text',
    customer_id: 'integer',
    created_at: 'timestamp with time zone',
    last_seen_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone',
  },
  passkeys: {
    id: 'integer',
    customer_id: 'integer',
    credential_id: 'text',
    public_key: 'text',
    counter: 'double precision',
    transports: 'jsonb',
    name: 'text',
    device_type: 'text',
    backed_up: 'boolean',
    created_at: 'timestamp with time zone',
    last_used_at: 'timestamp with time zone | null',
  },
  webauthn_challenges: {
    id: 'text',
    challenge: 'text',
    purpose: 'text',
    customer_id: 'integer | null',
    display_name: 'text | null',
    expires_at: 'timestamp with time zone',
  },
  email_codes: {
    id: 'integer',
    email: 'text',
    code_hash: 'text',
    created_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone',
    used_at: 'timestamp with time zone | null',
    attempts: 'integer',
  },
  rate_counters: {
    bucket: 'text',
    key: 'text',
    window_start: 'timestamp with time zone',
    count: 'integer',
  },
  server_secrets: {
    name: 'text',
    value: 'text',
    created_at: 'timestamp with time zone',
  },
  service_key: {
    id: 'integer',
    public_key: 'text',
    recorded_at: 'timestamp with time zone',
  },
  company_logos: {
    hash: 'text',
    image: 'bytea',
    created_at: 'timestamp with time zone',
  },
  company_members: {
    id: 'integer',
    company_id: 'integer',
    email: 'text | null',
    customer_id: 'integer | null',
    role: 'text',
    added_at: 'timestamp with time zone',
    added_by: 'integer | null',
  },
  operators: {
    customer_id: 'integer',
    added_at: 'timestamp with time zone',
    added_by: 'text',
  },
  operator_sessions: {
    id_hash: 'text',
    created_at: 'timestamp with time zone',
    expires_at: 'timestamp with time zone',
  },
  operator_actions: {
    id: 'integer',
    at: 'timestamp with time zone',
    operator: 'text',
    customer_id: 'integer | null',
    company_id: 'integer | null',
    action: 'text',
    reason: 'text | null',
  },
  member_actions: {
    id: 'bigint',
    company_id: 'integer',
    at: 'timestamp with time zone',
    customer_id: 'integer | null',
    member: 'text',
    action: 'text',
    detail: 'text | null',
    sandbox: 'boolean',
  },
  releases: {
    id: 'integer',
    version: 'text',
    arch: 'text',
    node_abi: 'text',
    sha256: 'text',
    size: 'bigint',
    manifest: 'jsonb',
    created_at: 'timestamp with time zone',
  },
  release_chunks: {
    release_id: 'integer',
    seq: 'integer',
    data: 'bytea',
  },
  rollouts: {
    id: 'integer',
    release_id: 'integer',
    target_kind: 'text',
    percent: 'integer | null',
    allow_downgrade: 'boolean',
    max_rollback_share: 'double precision',
    state: 'text',
    halted_reason: 'text | null',
    created_at: 'timestamp with time zone',
    updated_at: 'timestamp with time zone',
  },
  device_updates: {
    rollout_id: 'integer',
    device_id: 'text',
    state: 'text',
    reason: 'text | null',
    detail: 'text | null',
    sent_at: 'timestamp with time zone | null',
    updated_at: 'timestamp with time zone',
  },
  push_subscriptions: {
    id: 'integer',
    customer_id: 'integer',
    endpoint: 'text',
    p256dh: 'text',
    auth: 'text',
    name: 'text',
    created_at: 'timestamp with time zone',
    last_delivered_at: 'timestamp with time zone | null',
  },
  push_outbox: {
    id: 'bigint',
    subscription_id: 'integer',
    kind: 'text',
    journal_id: 'integer | null',
    gate_alert_id: 'integer | null',
    history_id: 'integer | null',
    created_at: 'timestamp with time zone',
    attempts: 'integer',
    next_attempt_at: 'timestamp with time zone',
    locked_until: 'timestamp with time zone | null',
    sent_at: 'timestamp with time zone | null',
    gave_up_at: 'timestamp with time zone | null',
    last_error: 'text | null',
  },
  push_journal_cursor: {
    only_row: 'boolean',
    last_entry_id: 'integer',
  },
  notification_choices: {
    device_id: 'text',
    customer_id: 'integer',
    tell: 'text',
    by_email: 'boolean',
    updated_at: 'timestamp with time zone',
    quiet_from: 'text | null',
    quiet_until: 'text | null',
    email_digest: 'boolean',
    left_open: 'boolean',
    access_changes: 'boolean',
  },
  mail_digests: {
    id: 'bigint',
    customer_id: 'integer',
    day: 'text',
    created_at: 'timestamp with time zone',
    attempts: 'integer',
    next_attempt_at: 'timestamp with time zone',
    locked_until: 'timestamp with time zone | null',
    sent_at: 'timestamp with time zone | null',
    gave_up_at: 'timestamp with time zone | null',
    last_error: 'text | null',
    lines: 'integer | null',
  },
  opening_mail_outbox: {
    id: 'bigint',
    customer_id: 'integer',
    kind: 'text',
    journal_id: 'integer | null',
    gate_alert_id: 'integer | null',
    history_id: 'integer | null',
    created_at: 'timestamp with time zone',
    attempts: 'integer',
    next_attempt_at: 'timestamp with time zone',
    locked_until: 'timestamp with time zone | null',
    sent_at: 'timestamp with time zone | null',
    gave_up_at: 'timestamp with time zone | null',
    last_error: 'text | null',
  },
  gate_alerts: {
    id: 'integer',
    device_id: 'text',
    object_id: 'integer',
    journal_id: 'integer | null',
    open_since: 'timestamp with time zone',
    left_open_at: 'timestamp with time zone',
    closed_at: 'timestamp with time zone | null',
  },
} as const satisfies Description;

/**
 * Whether a column's TypeScript type (as selected) agrees with its description: of the type the SQL type reads
 * as, or narrower (a text column typed as a union of its allowed values), null exactly where the column may be
 * null. A JSON column reads as whatever it holds, so only its presence is compared.
 */
type Agrees<S, C extends SqlColumn> = C extends `${infer N extends SqlTypeName} | null`
  ? null extends S
    ? Exclude<S, null> extends ReadAs[N]
      ? true
      : false
    : false
  : C extends SqlTypeName
    ? unknown extends S
      ? true
      : null extends S
        ? false
        : S extends ReadAs[C]
          ? true
          : false
    : false;

/** The columns of table T whose description and schema.ts type disagree, as `table.column`. */
type TableDisagreements<T extends keyof DB & string, S = Selectable<DB[T]>, D = (typeof TABLE_COLUMNS)[T]> = {
  [C in keyof S & keyof D & string]: D[C] extends SqlColumn
    ? Agrees<S[C], D[C]> extends true
      ? never
      : `${T}.${C}`
    : `${T}.${C}`;
}[keyof S & keyof D & string];

/** Every column in disagreement; never when all agree. */
type Disagreements = { [T in keyof DB & string]: TableDisagreements<T> }[keyof DB & string];

/** Fails to compile, naming the columns, when schema.ts and the description above disagree. */
export const schemaAgrees: [Disagreements] extends [never] ? true : Disagreements = true;
