import type { Database } from '../../cloud/foundation/db/database.js';
import {
  type Ack,
  ackSchema,
  type DeviceState,
  stateSchema,
  type Telemetry,
  telemetrySchema,
} from '../../shared/protocol/messages.js';
import { canonicalJson } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { PREFIX } from '../support/broker-env.js';
import type { BuiltMessage, Cast, Signer } from './device-message-cases.js';

/**
 * What the cloud must make of one device message (shared/README.md, "Messages"; cloud/links/controllers/device-messages.ts):
 * the verdict, worked out from how the message was built rather than by the handlers; the rows it may touch,
 * read before and after; and what every stored value must look like whatever was sent.
 */

/** The cloud reads no further than this (cloud/links/controllers/device-messages.ts). */
export const MAX_PAYLOAD_BYTES = 16 * 1024;

/** Where a message was turned away; all but `signature` before the database is asked anything. */
export type DropStage = 'topic' | 'retain' | 'size' | 'json' | 'schema' | 'device' | 'signature';

export type Verdict =
  | { kind: 'drop'; stage: DropStage }
  | { kind: 'ack'; from: string; ack: Ack }
  | { kind: 'state'; from: string; state: DeviceState }
  | { kind: 'telemetry'; from: string; telemetry: Telemetry };

type Target = { deviceId: string; channel: 'ack' | 'state' | 'telemetry' | 'cmd' };

/** The one topic of the cast the message went to; anything else is no device's channel. */
function targetOf(cast: Cast, topic: string): Target | null {
  for (const deviceId of [cast.self.id, cast.victim.id]) {
    for (const channel of ['ack', 'state', 'telemetry', 'cmd'] as const) {
      if (topic === deviceTopic(PREFIX, deviceId, channel)) return { deviceId, channel };
    }
  }
  return null;
}

export function verdict(cast: Cast, message: BuiltMessage): Verdict {
  const target = targetOf(cast, message.topic);
  if (!target || target.channel === 'cmd') return { kind: 'drop', stage: 'topic' };
  if (message.retain && target.channel !== 'state') return { kind: 'drop', stage: 'retain' };
  if (message.payload.length > MAX_PAYLOAD_BYTES) return { kind: 'drop', stage: 'size' };
  let body: unknown;
  try {
    body = JSON.parse(message.payload.toString('utf8'));
  } catch {
    return { kind: 'drop', stage: 'json' };
  }
  return verdictOfBody(cast, target, message, body);
}

function verdictOfBody(cast: Cast, target: Target, message: BuiltMessage, body: unknown): Verdict {
  const from = target.deviceId;
  switch (target.channel) {
    case 'ack': {
      const parsed = ackSchema.safeParse(body);
      if (!parsed.success) return { kind: 'drop', stage: 'schema' };
      if (parsed.data.device_id !== from) return { kind: 'drop', stage: 'device' };
      if (!signedBy(cast, message, parsed.data, from)) return { kind: 'drop', stage: 'signature' };
      return { kind: 'ack', from, ack: parsed.data };
    }
    case 'state': {
      const parsed = stateSchema.safeParse(body);
      if (!parsed.success) return { kind: 'drop', stage: 'schema' };
      if (parsed.data.device_id !== from) return { kind: 'drop', stage: 'device' };
      return { kind: 'state', from, state: parsed.data };
    }
    default: {
      const parsed = telemetrySchema.safeParse(body);
      if (!parsed.success) return { kind: 'drop', stage: 'schema' };
      if (parsed.data.device_id !== from) return { kind: 'drop', stage: 'device' };
      return { kind: 'telemetry', from, telemetry: parsed.data };
    }
  }
}

/** Signed by the device whose topic it came on: exactly what that device's key signed, signature text included. */
function signedBy(cast: Cast, message: BuiltMessage, ack: Ack, deviceId: string): boolean {
  if (!message.signed || ownerOf(cast, message.signed.by) !== deviceId) return false;
  return canonicalJson(ack) === canonicalJson(message.signed.ack);
}

function ownerOf(cast: Cast, signer: Signer): string | null {
  if (signer === 'self') return cast.self.id;
  if (signer === 'victim') return cast.victim.id;
  return null;
}

// ---- The rows a device message may touch ----

export interface JournalRow {
  id: number;
  device_id: string | null;
  command_id: string | null;
  outcome: string | null;
  detail: string | null;
  acked_at: number | null;
}

export interface DeviceRow {
  online: boolean;
  version: string | null;
  telemetry: unknown;
  state_at: number | null;
  telemetry_at: number | null;
}

export interface ObjectRow {
  device_id: string;
  local_id: string;
  label: string;
  kind: string;
  removed: boolean;
}

export interface Snapshot {
  journal: JournalRow[];
  devices: Record<string, DeviceRow>;
  objects: ObjectRow[];
  events: number;
}

const ms = (date: Date | null) => (date === null ? null : date.getTime());

export async function snapshot(db: Database, deviceIds: readonly string[]): Promise<Snapshot> {
  const journal = await db
    .selectFrom('journal')
    .select(['id', 'device_id', 'command_id', 'outcome', 'detail', 'acked_at'])
    .orderBy('id')
    .execute();
  const devices = await db
    .selectFrom('devices')
    .select(['id', 'online', 'version', 'telemetry', 'state_at', 'telemetry_at'])
    .where('id', 'in', [...deviceIds])
    .execute();
  const objects = await db
    .selectFrom('device_objects')
    .select(['device_id', 'local_id', 'label', 'kind', 'removed_at'])
    .where('device_id', 'in', [...deviceIds])
    .execute();
  const events = await db.selectFrom('events').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return {
    journal: journal.map((row) => ({ ...row, acked_at: ms(row.acked_at) })),
    devices: Object.fromEntries(
      devices.map(({ id, state_at, telemetry_at, ...row }) => [
        id,
        { ...row, state_at: ms(state_at), telemetry_at: ms(telemetry_at) },
      ]),
    ),
    objects: sorted(objects.map(({ removed_at, ...row }) => ({ ...row, removed: removed_at !== null }))),
    events: Number(events.n),
  };
}

// ---- What the rows must become ----

/** The journal after an ack: its command's entry for that device completed, if not acknowledged yet. */
export function withAck(before: Snapshot, ack: Ack, from: string): { after: Snapshot; applied: boolean } {
  const index = before.journal.findIndex(
    (row) => row.command_id === ack.command_id && row.device_id === from && row.acked_at === null,
  );
  if (index < 0) return { after: before, applied: false };
  const journal = [...before.journal];
  const opened = ack.outcome === 'opened';
  journal[index] = {
    ...journal[index]!,
    outcome: opened ? 'opened' : 'device_error',
    detail: opened ? null : (ack.reason ?? ack.outcome),
    acked_at: ack.finished_at,
  };
  return { after: { ...before, journal, events: before.events + 1 }, applied: true };
}

/** The device row and objects after a valid state; the times of receipt are the cloud's and not compared. */
export function withState(before: Snapshot, state: DeviceState, from: string): Snapshot {
  const device = before.devices[from]!;
  const devices = {
    ...before.devices,
    [from]: { ...device, online: state.online, version: state.version ? state.version : device.version },
  };
  if (!state.objects) return { ...before, devices };
  const reported = new Map(state.objects.map((object) => [object.id, object]));
  const kept = before.objects.filter((row) => row.device_id !== from || !reported.has(row.local_id));
  const others = kept.map((row) => (row.device_id === from ? { ...row, removed: true } : row));
  const fresh = [...reported.values()].map((object) => ({
    device_id: from,
    local_id: object.id,
    label: object.label,
    kind: object.kind,
    removed: false,
  }));
  return { ...before, devices, objects: sorted([...others, ...fresh]) };
}

export function withTelemetry(before: Snapshot, telemetry: Telemetry, from: string): Snapshot {
  return { ...before, devices: { ...before.devices, [from]: { ...before.devices[from]!, telemetry } } };
}

/** In one order whatever the database's collation: by device, then local id, in code units. */
function sorted(rows: ObjectRow[]): ObjectRow[] {
  const key = (row: ObjectRow) => `${row.device_id}/${row.local_id}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Without the cloud's own times of receipt, which a model cannot know. */
export function comparable(s: Snapshot): Snapshot {
  const devices = Object.fromEntries(
    Object.entries(s.devices).map(([id, row]) => [id, { ...row, state_at: null, telemetry_at: null }]),
  );
  return { ...s, devices };
}

// ---- What every stored value must look like ----

/** No control characters and no unpaired surrogates: text a customer's page and the database both take. */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u;
/** The last millisecond of year 9999: later ones take six-digit years, which PGlite does not store. */
const LAST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const isText = (value: unknown, max: number, min = 0): boolean =>
  typeof value === 'string' && value.length >= min && value.length <= max && PRINTABLE.test(value);
const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;
const isTime = (value: unknown): boolean => isCount(value) && (value as number) <= LAST_TIME_MS;

const TELEMETRY_KEYS = ['at', 'clock_synced', 'device_id', 'outbox', 'signal', 'uptime_s', 'v', 'version'];

function isTelemetry(value: unknown, deviceId: string): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const t = value as Record<string, unknown>;
  const signal = t.signal;
  return (
    Object.keys(t).sort().join() === TELEMETRY_KEYS.join() &&
    t.v === 1 &&
    t.device_id === deviceId &&
    isTime(t.at) &&
    isCount(t.uptime_s) &&
    isText(t.version, 32) &&
    (signal === null || (Number.isInteger(signal) && (signal as number) >= 0 && (signal as number) <= 31)) &&
    typeof t.clock_synced === 'boolean' &&
    isCount(t.outbox)
  );
}

/** Every value a device can set, checked without the schemas; returns what is wrong, or nothing. */
export function invalidValues(s: Snapshot): string[] {
  const wrong: string[] = [];
  for (const [id, row] of Object.entries(s.devices)) {
    if (typeof row.online !== 'boolean') wrong.push(`${id}.online ${String(row.online)}`);
    if (row.version !== null && !isText(row.version, 32))
      wrong.push(`${id}.version ${JSON.stringify(row.version)}`);
    if (row.telemetry !== null && !isTelemetry(row.telemetry, id)) {
      wrong.push(`${id}.telemetry ${JSON.stringify(row.telemetry)}`);
    }
  }
  for (const row of s.objects) {
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(row.local_id)) wrong.push(`object id ${row.local_id}`);
    if (!isText(row.label, 64, 1)) wrong.push(`object label ${JSON.stringify(row.label)}`);
    if (!['relay', 'gsm', 'simulated'].includes(row.kind)) wrong.push(`object kind ${row.kind}`);
  }
  for (const row of s.journal) {
    if (row.acked_at !== null && !isTime(row.acked_at))
      wrong.push(`journal ${row.id} acked_at ${row.acked_at}`);
  }
  return wrong;
}
