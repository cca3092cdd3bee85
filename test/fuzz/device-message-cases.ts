import fc from 'fast-check';
import type { Database } from '../../cloud/foundation/db/database.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { ACK_REASONS, type Ack, PROTOCOL_VERSION, type UnsignedAck } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { insertOpenEntry, PREFIX } from '../support/broker-env.js';
import type { DeviceAccount } from '../support/fake-device.js';
import {
  extraKey,
  type FieldValue,
  fieldValue,
  invalidUtf8,
  serialize,
  withBytesAt,
} from './field-values.js';

/**
 * What a device may publish on its channels (shared/README.md, "Messages"), as fast-check cases: bytes, any
 * JSON, or an ack, state or telemetry body made valid and then given one change. A case is a recipe; `build`
 * turns it into a topic and payload, making the journal entries an ack needs, and says what was signed.
 */

export type Channel = 'ack' | 'state' | 'telemetry';
const CHANNELS = ['ack', 'state', 'telemetry'] as const;
export type Signer = 'self' | 'victim' | 'stranger';

/** Where a message goes: a channel of the sender's own, of the victim, or a topic that is no device's. */
export type TopicChoice =
  | { kind: 'own'; channel: Channel | 'cmd' }
  | { kind: 'victim'; channel: Channel }
  | { kind: 'foreign'; shape: number; text: string };

export type Change =
  | { kind: 'none' }
  | { kind: 'replace'; field: number; value: FieldValue }
  | { kind: 'replace-in-object'; index: number; field: number; value: FieldValue }
  | { kind: 'remove'; field: number }
  | { kind: 'add'; key: string; value: FieldValue }
  | { kind: 'flip-signature-bit'; bit: number }
  | { kind: 'signature-text'; at: number; char: string }
  | { kind: 'invalid-utf8'; at: number; bytes: readonly number[] };

export interface AckRecipe {
  kind: 'ack';
  /** Which command it answers: a pending one of the sender or of the victim, none, or one applied already. */
  command: 'pending' | 'victim-pending' | 'unknown' | 'replay';
  unknownId: string;
  pick: number;
  names: 'self' | 'victim';
  signer: Signer;
  outcome: Ack['outcome'];
  reason: Ack['reason'] | null;
  receivedAt: number;
  finishedAt: number;
  change: Change;
  /** Signed again after the change, so that only the changed value is wrong, not the signature. */
  resign: boolean;
}

export interface StateRecipe {
  kind: 'state';
  names: 'self' | 'victim';
  online: boolean;
  at: number;
  version: string | null;
  objects: { id: string; label: string; kind: string }[] | null;
  change: Change;
}

export interface TelemetryRecipe {
  kind: 'telemetry';
  names: 'self' | 'victim';
  at: number;
  uptime: number;
  version: string;
  signal: number | null;
  clockSynced: boolean;
  outbox: number;
  change: Change;
}

export type BodyRecipe =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'json'; text: string }
  | AckRecipe
  | StateRecipe
  | TelemetryRecipe;

export interface MessageCase {
  topic: TopicChoice;
  retain: boolean;
  body: BodyRecipe;
  /** Trailing spaces up to this many bytes: at the cloud's limit, one past it, or far past it. */
  padTo: number | null;
}

// ---- Arbitraries ----

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The last millisecond of year 9999, and of what a JavaScript Date holds. */
const LAST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const LAST_DATE_MS = 8_640_000_000_000_000;

/** A fixed day rather than the clock, so that a seed replays the same case. */
const DAY = Date.UTC(2026, 0, 1);

/** A time: mostly on a day of our time, also every edge a Unix millisecond count has. */
const time = fc.oneof(
  { arbitrary: fc.integer({ min: DAY, max: DAY + 86_400_000 }), weight: 18 },
  {
    arbitrary: fc.constantFrom(
      0,
      LAST_TIME_MS,
      LAST_TIME_MS + 1,
      LAST_DATE_MS,
      LAST_DATE_MS + 1,
      Number.MAX_SAFE_INTEGER,
    ),
    weight: 1,
  },
  { arbitrary: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), weight: 1 },
);

/** Text as devices report it, mostly, and text they must not: control characters, unpaired surrogates. */
const text = (maxLength: number) =>
  fc.oneof(
    { arbitrary: fc.string({ maxLength }), weight: 4 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: Math.min(maxLength, 16) }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength }), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        '1.0.0',
        'Main gate',
        '\u0000',
        'a\u0000b',
        '\ud800',
        'x\udfffy',
        '\t',
        '\u001b[2J',
      ),
      weight: 1,
    },
  );

export const change: fc.Arbitrary<Change> = fc.oneof(
  { arbitrary: fc.constant<Change>({ kind: 'none' }), weight: 12 },
  {
    arbitrary: fc.record({ kind: fc.constant('replace' as const), field: fc.nat(), value: fieldValue }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('replace-in-object' as const),
      index: fc.nat(),
      field: fc.nat(),
      value: fieldValue,
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), field: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('add' as const), key: extraKey, value: fieldValue }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('flip-signature-bit' as const),
      bit: fc.integer({ min: 0, max: 511 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('signature-text' as const),
      at: fc.oneof(fc.constant(85), fc.integer({ min: 0, max: 85 })),
      char: fc.constantFrom(...BASE64),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('invalid-utf8' as const),
      at: fc.nat({ max: 300 }),
      bytes: invalidUtf8,
    }),
    weight: 1,
  },
);

const names = fc.oneof(
  { arbitrary: fc.constant('self' as const), weight: 9 },
  { arbitrary: fc.constant('victim' as const), weight: 1 },
);

const ackRecipe: fc.Arbitrary<AckRecipe> = fc.record({
  kind: fc.constant('ack' as const),
  command: fc.oneof(
    { arbitrary: fc.constant('pending' as const), weight: 3 },
    {
      arbitrary: fc.constantFrom('victim-pending' as const, 'unknown' as const, 'replay' as const),
      weight: 3,
    },
  ),
  unknownId: fc.uuid({ version: 4 }),
  pick: fc.nat(),
  names,
  signer: fc.oneof(
    { arbitrary: fc.constant('self' as const), weight: 8 },
    { arbitrary: fc.constantFrom('victim' as const, 'stranger' as const), weight: 2 },
  ),
  outcome: fc.constantFrom('opened' as const, 'refused' as const, 'failed' as const),
  reason: fc.option(fc.constantFrom(...ACK_REASONS)),
  receivedAt: time,
  finishedAt: time,
  change,
  resign: fc.boolean(),
});

const deviceObject = fc.record({
  id: fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,31}$/), fc.constantFrom('gate', 'door')),
  // A state lists up to 32 objects: one label in ten may be one a device must not send.
  label: fc.oneof(
    { arbitrary: fc.string({ minLength: 1, maxLength: 64 }), weight: 9 },
    { arbitrary: text(64), weight: 1 },
  ),
  kind: fc.constantFrom('relay', 'gsm', 'simulated'),
});

const stateRecipe: fc.Arbitrary<StateRecipe> = fc.record({
  kind: fc.constant('state' as const),
  names,
  online: fc.boolean(),
  at: time,
  version: fc.option(text(32)),
  objects: fc.option(fc.array(deviceObject, { maxLength: 32 })),
  change,
});

const telemetryRecipe: fc.Arbitrary<TelemetryRecipe> = fc.record({
  kind: fc.constant('telemetry' as const),
  names,
  at: time,
  uptime: fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER)),
  version: text(32),
  signal: fc.option(fc.integer({ min: 0, max: 31 })),
  clockSynced: fc.boolean(),
  outbox: fc.nat(),
  change,
});

export const bodyRecipe: fc.Arbitrary<BodyRecipe> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('json' as const),
      text: fc.oneof(
        fc.json(),
        fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      ),
    }),
    weight: 1,
  },
  { arbitrary: ackRecipe, weight: 4 },
  { arbitrary: stateRecipe, weight: 3 },
  { arbitrary: telemetryRecipe, weight: 3 },
);

/** Retained now and then: only `state` may be. */
const retained = fc.oneof(
  { arbitrary: fc.constant(false), weight: 9 },
  { arbitrary: fc.constant(true), weight: 1 },
);

const padTo = fc.oneof(
  { arbitrary: fc.constant(null), weight: 12 },
  { arbitrary: fc.constantFrom(16 * 1024, 16 * 1024 + 1, 20 * 1024), weight: 1 },
);

/** A message on one of the sender's own channels, mostly the one its body is meant for. */
export const ownMessage: fc.Arbitrary<MessageCase> = fc
  .record({
    body: bodyRecipe,
    elsewhere: fc.oneof(
      { arbitrary: fc.constant(null), weight: 6 },
      { arbitrary: fc.constantFrom(...CHANNELS), weight: 1 },
    ),
    retain: retained,
    padTo,
  })
  .map(({ body, elsewhere, retain, padTo }) => ({
    topic: { kind: 'own', channel: elsewhere ?? channelOf(body) },
    retain,
    body,
    padTo,
  }));

/** Any message the dispatcher may be handed: on the sender's channels, the victim's, `cmd`, or no device's. */
export const anyMessage: fc.Arbitrary<MessageCase> = fc.oneof(
  { arbitrary: ownMessage, weight: 8 },
  {
    arbitrary: fc.record({
      topic: fc.oneof(
        fc.record({ kind: fc.constant('victim' as const), channel: fc.constantFrom(...CHANNELS) }),
        fc.constant<TopicChoice>({ kind: 'own', channel: 'cmd' }),
        fc.record({ kind: fc.constant('foreign' as const), shape: fc.nat({ max: 7 }), text: fc.string() }),
      ),
      retain: retained,
      body: bodyRecipe,
      padTo: fc.constant(null),
    }),
    weight: 2,
  },
);

function channelOf(body: BodyRecipe): Channel {
  if (body.kind === 'ack' || body.kind === 'state' || body.kind === 'telemetry') return body.kind;
  return 'telemetry';
}

// ---- Building a case ----

/** The devices of a run: the sender ("self", who publishes), and a victim it may name or aim at. */
export interface Cast {
  db: Database;
  self: DeviceAccount;
  victim: DeviceAccount;
  /** Acks of the sender applied so far, for replays. */
  applied: Ack[];
}

/** What was built: where it goes, its bytes, and the ack it carries as signed (before any later change). */
export interface BuiltMessage {
  topic: string;
  payload: Buffer;
  retain: boolean;
  signed: { ack: Ack; by: Signer } | null;
}

const stranger = SigningKey.generate();

export async function build(cast: Cast, message: MessageCase): Promise<BuiltMessage> {
  const { payload, signed } = await buildBody(cast, message.body);
  const padded =
    message.padTo !== null && payload.length < message.padTo
      ? Buffer.concat([payload, Buffer.alloc(message.padTo - payload.length, 0x20)])
      : payload;
  return { topic: topicOf(cast, message.topic), payload: padded, retain: message.retain, signed };
}

function topicOf(cast: Cast, choice: TopicChoice): string {
  if (choice.kind === 'own') return deviceTopic(PREFIX, cast.self.id, choice.channel);
  if (choice.kind === 'victim') return deviceTopic(PREFIX, cast.victim.id, choice.channel);
  const id = cast.self.id;
  const shapes = [
    choice.text,
    `${PREFIX}/dev/${id}/ack/more`,
    `${PREFIX}/dev/${id}`,
    `elsewhere/dev/${id}/ack`,
    `${PREFIX}/dev/${id.toLowerCase()}/state`,
    `${PREFIX}/dev/+/ack`,
    `${PREFIX}/dev/${id}/Ack`,
    `${PREFIX}/dev//telemetry`,
  ];
  return shapes[choice.shape % shapes.length]!;
}

async function buildBody(
  cast: Cast,
  recipe: BodyRecipe,
): Promise<{ payload: Buffer; signed: BuiltMessage['signed'] }> {
  switch (recipe.kind) {
    case 'bytes':
      return { payload: Buffer.from(recipe.bytes), signed: null };
    case 'json':
      return { payload: Buffer.from(recipe.text), signed: null };
    case 'ack':
      return buildAck(cast, recipe);
    case 'state':
      return { payload: changed(stateBody(cast, recipe), recipe.change), signed: null };
    case 'telemetry':
      return { payload: changed(telemetryBody(cast, recipe), recipe.change), signed: null };
  }
}

async function buildAck(cast: Cast, recipe: AckRecipe) {
  const replayed =
    recipe.command === 'replay' ? cast.applied[recipe.pick % (cast.applied.length || 1)] : undefined;
  const key = keyOf(cast, replayed ? 'self' : recipe.signer);
  const by: Signer = replayed ? 'self' : recipe.signer;
  const ack = replayed ?? signAck(key, await unsignedAck(cast, recipe));
  const body: Record<string, FieldValue> = { ...ack };
  const payload = changed(body, recipe.change);
  if (!recipe.resign || !isFieldChange(recipe.change)) return { payload, signed: { ack, by } };
  // Signed again over the changed body, when it can be: a value canonical JSON refuses stays as it was.
  try {
    const resigned = signAck(key, withoutSig(JSON.parse(payload.toString('utf8'))) as UnsignedAck);
    return { payload: Buffer.from(JSON.stringify(resigned)), signed: { ack: resigned, by } };
  } catch {
    return { payload, signed: { ack, by } };
  }
}

async function unsignedAck(cast: Cast, recipe: AckRecipe): Promise<UnsignedAck> {
  const commandId = await commandIdFor(cast, recipe);
  return {
    v: PROTOCOL_VERSION,
    command_id: commandId,
    device_id: recipe.names === 'self' ? cast.self.id : cast.victim.id,
    outcome: recipe.outcome,
    ...(recipe.reason ? { reason: recipe.reason } : {}),
    received_at: recipe.receivedAt,
    finished_at: recipe.finishedAt,
  };
}

async function commandIdFor(cast: Cast, recipe: AckRecipe): Promise<string> {
  if (recipe.command === 'pending') return (await insertOpenEntry(cast.db, cast.self.id)).commandId;
  if (recipe.command === 'victim-pending') return (await insertOpenEntry(cast.db, cast.victim.id)).commandId;
  return recipe.unknownId;
}

function stateBody(cast: Cast, recipe: StateRecipe): Record<string, FieldValue> {
  return {
    v: PROTOCOL_VERSION,
    device_id: recipe.names === 'self' ? cast.self.id : cast.victim.id,
    online: recipe.online,
    at: recipe.at,
    ...(recipe.version !== null ? { version: recipe.version } : {}),
    ...(recipe.objects !== null ? { objects: recipe.objects } : {}),
  };
}

function telemetryBody(cast: Cast, recipe: TelemetryRecipe): Record<string, FieldValue> {
  return {
    v: PROTOCOL_VERSION,
    device_id: recipe.names === 'self' ? cast.self.id : cast.victim.id,
    at: recipe.at,
    uptime_s: recipe.uptime,
    version: recipe.version,
    signal: recipe.signal,
    clock_synced: recipe.clockSynced,
    outbox: recipe.outbox,
  };
}

function keyOf(cast: Cast, signer: Signer): SigningKey {
  if (signer === 'self') return cast.self.key;
  if (signer === 'victim') return cast.victim.key;
  return stranger;
}

function isFieldChange(c: Change): boolean {
  return c.kind === 'replace' || c.kind === 'replace-in-object' || c.kind === 'remove';
}

function withoutSig(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const { sig: _sig, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** The body's JSON with one change; a field is picked by its index among the body's keys. */
export function changed(body: Record<string, FieldValue>, c: Change): Buffer {
  const copy: Record<string, FieldValue> = { ...body };
  const keys = Object.keys(copy);
  const pick = (index: number) => keys[index % keys.length]!;
  switch (c.kind) {
    case 'none':
      return Buffer.from(serialize(copy));
    case 'replace':
      copy[pick(c.field)] = c.value;
      return Buffer.from(serialize(copy));
    case 'replace-in-object':
      return Buffer.from(serialize(withNestedChange(copy, c)));
    case 'remove':
      delete copy[pick(c.field)];
      return Buffer.from(serialize(copy));
    case 'add':
      return Buffer.from(serialize(copy, [[c.key, c.value]]));
    case 'flip-signature-bit':
      if (typeof copy.sig === 'string') copy.sig = flipped(copy.sig, c.bit);
      return Buffer.from(serialize(copy));
    case 'signature-text':
      if (typeof copy.sig === 'string')
        copy.sig = `${copy.sig.slice(0, c.at)}${c.char}${copy.sig.slice(c.at + 1)}`;
      return Buffer.from(serialize(copy));
    case 'invalid-utf8':
      return withBytesAt(serialize(copy), c.at, c.bytes);
  }
}

/** One field of one of the objects a state lists changed; nothing when it lists none. */
function withNestedChange(
  body: Record<string, FieldValue>,
  c: Extract<Change, { kind: 'replace-in-object' }>,
): Record<string, FieldValue> {
  const objects = body.objects;
  if (!Array.isArray(objects) || objects.length === 0) return body;
  const list = [...(objects as Record<string, FieldValue>[])];
  const target = { ...list[c.index % list.length]! };
  const keys = Object.keys(target);
  target[keys[c.field % keys.length]!] = c.value;
  list[c.index % list.length] = target;
  return { ...body, objects: list };
}

function flipped(sig: string, bit: number): string {
  const bytes = Buffer.from(sig, 'base64');
  bytes[(bit >> 3) % bytes.length]! ^= 1 << (bit & 7);
  return bytes.toString('base64');
}
