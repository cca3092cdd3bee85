import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectConfig } from '../../device/config.js';
import type { Driver, OpenOutcome } from '../../device/drivers/driver.js';
import { CommandHandler } from '../../device/runtime/commands.js';
import { ExecutedIds } from '../../device/runtime/executed.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  ACK_REASONS,
  type Ack,
  type AckReason,
  type Command,
  commandSchema,
  PROTOCOL_VERSION,
} from '../../shared/protocol/messages.js';
import { canonicalJson, signCommand, verifyAck } from '../../shared/protocol/signing.js';
import { DEVICE_ID, keys, makeConfig, OTHER_DEVICE_ID, tempDir } from '../device/fixtures.js';
import {
  extraKey,
  type FieldValue,
  fieldValue,
  invalidUtf8,
  serialize,
  withBytesAt,
} from './field-values.js';
import { fuzzParameters, fuzzTimeoutMs } from './settings.js';

/*
 * The controller's command handling (device/runtime/commands.ts) fed what could come down its `cmd` topic:
 * bytes, any JSON, and a correctly signed command with one thing changed. A payload is recognisably a
 * command when it has the shape of shared/README.md, "Messages" (the command schema); the controller answers
 * each of those with a signed acknowledgement and drops anything else with one log line. Only the command the
 * cloud signed, unchanged, ever moves an output, and only once.
 */

const NOW = Date.UTC(2025, 0, 1);
/** When this run of the controller found its clock synchronised: a minute before the commands. */
const TRUSTED_SINCE = NOW - 60_000;
const LIFETIME_MS = 5000;
const FIELDS = [
  'v',
  'id',
  'device_id',
  'object',
  'number_id',
  'action',
  'issued_at',
  'expires_at',
  'sig',
] as const;
type Field = (typeof FIELDS)[number];

const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype);

/** Counts what reaches the outputs; every opening succeeds at once. */
class CountingDriver implements Driver {
  readonly kind = 'simulated';
  readonly faultReason = 'relay_fault';
  readonly opened: string[] = [];
  async start() {}
  async stop() {}
  async open(object: ObjectConfig): Promise<OpenOutcome> {
    this.opened.push(object.id);
    return { outcome: 'opened' };
  }
}

interface Harness {
  handler: CommandHandler;
  driver: CountingDriver;
  delivered: Ack[];
  lines: string[];
}

let cloud: SigningKey;
let device: SigningKey;
let objects: readonly ObjectConfig[];
const stranger = SigningKey.generate();
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const made = await tempDir();
  cleanup = made.cleanup;
  ({ cloud, device } = keys());
  objects = (await makeConfig(made.dir, { cloudKey: cloud, deviceKey: device })).objects;
});
afterAll(async () => {
  await cleanup();
});

/** A controller fresh from its start, its clock synchronised, at `NOW` plus a little. */
function harness(clock: { synced: boolean; now: number } = { synced: true, now: NOW + 100 }): Harness {
  const driver = new CountingDriver();
  const delivered: Ack[] = [];
  const lines: string[] = [];
  const now = () => clock.now;
  const handler = new CommandHandler({
    deviceId: DEVICE_ID,
    commandKey: cloud.publicKey,
    deviceKey: device,
    objects,
    driverFor: () => driver,
    executed: new ExecutedIds({ now }),
    clock: { synced: clock.synced, trustedSince: clock.synced ? TRUSTED_SINCE : null },
    now,
    deliver: async (ack) => {
      delivered.push(ack);
    },
    log: (line) => lines.push(line),
  });
  return { handler, driver, delivered, lines };
}

function signedCommand(id: string, key = cloud, patch: Partial<Omit<Command, 'sig'>> = {}): Command {
  return signCommand(key, {
    v: PROTOCOL_VERSION,
    id,
    device_id: DEVICE_ID,
    object: 'gate',
    number_id: 1,
    action: 'open',
    issued_at: NOW,
    expires_at: NOW + LIFETIME_MS,
    ...patch,
  });
}

// ---- What is sent: garbage, or the signed command with one change ----

type Mutation =
  | { kind: 'none' }
  | { kind: 'replace'; field: Field; value: FieldValue }
  | { kind: 'remove'; field: Field }
  | { kind: 'add'; key: string; value: FieldValue }
  | { kind: 'repeat-key'; field: Field; value: FieldValue }
  | { kind: 'flip-signature-bit'; bit: number }
  | { kind: 'signature-text'; at: number; char: string }
  | { kind: 'shift-time'; field: 'issued_at' | 'expires_at'; by: number }
  | { kind: 'forge' }
  | { kind: 'invalid-utf8'; at: number; bytes: readonly number[] }
  | { kind: 'reformat' };

const field = fc.constantFrom(...FIELDS);
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>({ kind: 'none' }),
  fc.record({ kind: fc.constant('replace' as const), field, value: fieldValue }),
  fc.record({ kind: fc.constant('remove' as const), field }),
  fc.record({ kind: fc.constant('add' as const), key: extraKey, value: fieldValue }),
  fc.record({ kind: fc.constant('repeat-key' as const), field, value: fieldValue }),
  fc.record({ kind: fc.constant('flip-signature-bit' as const), bit: fc.integer({ min: 0, max: 511 }) }),
  fc.record({
    kind: fc.constant('signature-text' as const),
    // The last character carries two bits of the signature and four that decoders ignore.
    at: fc.oneof(fc.constant(85), fc.integer({ min: 0, max: 85 })),
    char: fc.constantFrom(...BASE64),
  }),
  fc.record({
    kind: fc.constant('shift-time' as const),
    field: fc.constantFrom('issued_at' as const, 'expires_at' as const),
    by: fc.integer({ min: -1e9, max: 1e9 }).filter((by) => by !== 0),
  }),
  fc.constant<Mutation>({ kind: 'forge' }),
  fc.record({
    kind: fc.constant('invalid-utf8' as const),
    at: fc.nat({ max: 400 }),
    bytes: invalidUtf8,
  }),
  fc.constant<Mutation>({ kind: 'reformat' }),
);

function mutated(original: Command, change: Mutation): Buffer {
  const body: Record<string, FieldValue> = { ...original };
  switch (change.kind) {
    case 'none':
      return Buffer.from(JSON.stringify(original));
    case 'replace':
      body[change.field] = change.value;
      return Buffer.from(serialize(body));
    case 'remove':
      delete body[change.field];
      return Buffer.from(serialize(body));
    case 'add':
      return Buffer.from(serialize(body, [[change.key, change.value]]));
    case 'repeat-key':
      // JSON.parse keeps the last of two members with one name.
      return Buffer.from(serialize(body, [[change.field, change.value]]));
    case 'flip-signature-bit': {
      const sig = Buffer.from(original.sig, 'base64');
      sig[change.bit >> 3]! ^= 1 << (change.bit & 7);
      return Buffer.from(JSON.stringify({ ...original, sig: sig.toString('base64') }));
    }
    case 'signature-text': {
      const sig = `${original.sig.slice(0, change.at)}${change.char}${original.sig.slice(change.at + 1)}`;
      return Buffer.from(JSON.stringify({ ...original, sig }));
    }
    case 'shift-time':
      return Buffer.from(JSON.stringify({ ...original, [change.field]: original[change.field] + change.by }));
    case 'forge':
      return Buffer.from(JSON.stringify({ ...signedCommand(original.id, stranger), id: original.id }));
    case 'invalid-utf8':
      return withBytesAt(JSON.stringify(original), change.at, change.bytes);
    case 'reformat': {
      const reversed = Object.fromEntries(Object.entries(original).reverse());
      return Buffer.from(JSON.stringify(reversed, null, 2));
    }
  }
}

/** A payload: arbitrary bytes, arbitrary JSON, or the case's signed command as sent or with one change. */
type Delivery = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'json'; text: string } | Mutation;

const delivery: fc.Arbitrary<Delivery> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('json' as const),
      text: fc.oneof(
        fc.json(),
        fc.jsonValue().map((value) => JSON.stringify(value)),
      ),
    }),
    weight: 1,
  },
  { arbitrary: mutation, weight: 6 },
);

function payloadOf(original: Command, sent: Delivery): Buffer {
  if (sent.kind === 'bytes') return Buffer.from(sent.bytes);
  if (sent.kind === 'json') return Buffer.from(sent.text);
  return mutated(original, sent);
}

// ---- What must come of it ----

/**
 * The command in the payload, when it has the shape of the wire format (the command schema); read here, apart
 * from the handler's own parsing.
 */
function recognised(payload: Buffer): Command | null {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = commandSchema.safeParse(body);
  return parsed.success ? parsed.data : null;
}

/** Whether the payload carries exactly what the cloud signed, signature text included. */
function isOriginal(command: Command | null, original: Command): boolean {
  return command !== null && canonicalJson(command) === canonicalJson(original);
}

/**
 * One payload's answer: a signed acknowledgement of a recognised command, delivered once, refusing with a
 * documented reason anything but the first copy of the original; nothing and one log line for the rest.
 */
function checkAnswer(
  payload: Buffer,
  answer: Ack | null,
  h: Harness,
  before: { delivered: number; lines: number },
) {
  const command = recognised(payload);
  const newLines = h.lines.slice(before.lines);
  if (!command) {
    expect(answer).toBeNull();
    expect(h.delivered.length).toBe(before.delivered);
    expect(newLines.filter((line) => line.startsWith('command: dropped'))).toHaveLength(1);
    return;
  }
  expect(answer).not.toBeNull();
  const ack = answer!;
  expect(h.delivered.slice(before.delivered)).toEqual([ack]);
  expect(verifyAck(device.publicKey, ack)).toBe(true);
  expect(ack).toMatchObject({ command_id: command.id, device_id: DEVICE_ID });
  expect(newLines.filter((line) => line.startsWith('command: dropped'))).toHaveLength(0);
  if (ack.outcome !== 'opened') expect(ACK_REASONS).toContain(ack.reason);
}

/** The reason the first failing check gives, in the order of shared/README.md; null when all pass. */
function expectedRefusal(c: {
  device: string;
  signer: 'cloud' | 'stranger';
  synced: boolean;
  expiresAt: number;
  issuedAt: number;
  object: string;
  repeated: boolean;
  now: number;
}): AckReason | null {
  if (c.device !== DEVICE_ID) return 'wrong_device';
  if (c.signer !== 'cloud') return 'bad_signature';
  if (!c.synced) return 'clock_unsynced';
  if (c.now > c.expiresAt) return 'expired';
  if (c.repeated) return 'duplicate';
  if (c.issuedAt < TRUSTED_SINCE) return 'stale';
  if (!objects.some((object) => object.id === c.object)) return 'unknown_object';
  return null;
}

describe('[attack:fuzz.command-parser] the controller parsing and checking what comes on its cmd topic', () => {
  it(
    'answers every recognisable command with a signed refusal or, for the signed original only, one opening',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uuid({ version: 4 }),
          fc.array(delivery, { minLength: 1, maxLength: 4 }),
          async (id, deliveries) => {
            const original = signedCommand(id);
            const h = harness();
            let originalSeen = false;
            for (const sent of deliveries) {
              const payload = payloadOf(original, sent);
              const before = {
                delivered: h.delivered.length,
                lines: h.lines.length,
                opened: h.driver.opened.length,
              };
              const answer = await h.handler.handle(payload);
              checkAnswer(payload, answer, h, before);
              const first: boolean = isOriginal(recognised(payload), original) && !originalSeen;
              originalSeen ||= first;
              expect(h.driver.opened.length - before.opened).toBe(first ? 1 : 0);
              expect(answer?.outcome === 'opened').toBe(first);
            }
            // A `__proto__` or `constructor` member must stay data, never reach the prototypes.
            expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(PROTOTYPE_KEYS);
          },
        ),
        fuzzParameters(400),
      );
    },
    fuzzTimeoutMs,
  );

  it(
    'opens once whatever copies and changed copies of a command arrive at the same time',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uuid({ version: 4 }),
          fc.array(delivery, { minLength: 2, maxLength: 6 }),
          async (id, deliveries) => {
            const original = signedCommand(id);
            const h = harness();
            const payloads = deliveries.map((sent) => payloadOf(original, sent));
            const answers = await Promise.all(payloads.map((payload) => h.handler.handle(payload)));
            const originals = payloads.filter((payload) => isOriginal(recognised(payload), original));
            expect(h.driver.opened).toHaveLength(originals.length > 0 ? 1 : 0);
            expect(answers.filter((answer) => answer?.outcome === 'opened')).toHaveLength(
              originals.length > 0 ? 1 : 0,
            );
            payloads.forEach((payload, index) => {
              expect(answers[index] === null).toBe(recognised(payload) === null);
            });
            expect(h.delivered).toHaveLength(answers.filter((answer) => answer !== null).length);
          },
        ),
        fuzzParameters(200),
      );
    },
    fuzzTimeoutMs,
  );

  it(
    'refuses a command the cloud signed for the first check it fails, in the documented order',
    async () => {
      const known = objects.map((object) => object.id);
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            id: fc.uuid({ version: 4 }),
            device: fc.constantFrom(DEVICE_ID, OTHER_DEVICE_ID),
            signer: fc.constantFrom('cloud' as const, 'stranger' as const),
            synced: fc.boolean(),
            issuedAt: fc.integer({ min: TRUSTED_SINCE - 10_000, max: NOW + 10_000 }),
            lifetime: fc.integer({ min: -10_000, max: 20_000 }),
            object: fc.oneof(fc.constantFrom(...known), fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,31}$/)),
            numberId: fc.integer({ min: 1, max: 2 ** 31 }),
            twice: fc.boolean(),
          }),
          async (c) => {
            const now = c.issuedAt + 100;
            const h = harness({ synced: c.synced, now });
            const command = signedCommand(c.id, c.signer === 'cloud' ? cloud : stranger, {
              device_id: c.device,
              object: c.object,
              number_id: c.numberId,
              issued_at: c.issuedAt,
              expires_at: Math.max(0, c.issuedAt + c.lifetime),
            });
            const facts = { ...c, expiresAt: command.expires_at, now, repeated: false };
            const first = await h.handler.handle(Buffer.from(JSON.stringify(command)));
            const reason = expectedRefusal(facts);
            expect(first).toMatchObject(reason ? { outcome: 'refused', reason } : { outcome: 'opened' });
            expect(h.driver.opened).toEqual(reason ? [] : [c.object]);
            if (!c.twice) return;
            const again = await h.handler.handle(Buffer.from(JSON.stringify(command)));
            const second = expectedRefusal({ ...facts, repeated: reason === null });
            expect(again).toMatchObject({ outcome: 'refused', reason: second ?? 'none' });
            expect(h.driver.opened).toHaveLength(reason ? 0 : 1);
          },
        ),
        fuzzParameters(300),
      );
    },
    fuzzTimeoutMs,
  );
});
