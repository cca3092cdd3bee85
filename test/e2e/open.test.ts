import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { realSleep, type Sleep } from '../../device/drivers/driver.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { type BrokerKind, brokerKindSkipReason, CLUSTER_KINDS, clusterEnv } from '../support/broker-env.js';
import {
  type Answer,
  type Signer,
  secretCompany,
  signatureCompany,
  startTestCloud,
  type TestCloud,
} from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { startRabbitCluster, type TestRabbitCluster } from '../support/rabbitmq-cluster.js';
import { waitFor } from '../support/wait-for.js';

/**
 * `open` end to end: the company API, the broker (embedded, a private Mosquitto, then a private three-node
 * RabbitMQ cluster) and a real controller
 * runtime (simulated outputs) provisioned with its own `provision()` against the cloud's HTTP address, as an
 * installer would.
 */

/**
 * Small, so that a timeout costs little; far above a local round trip even on a busy machine, so that a normal
 * open never hits it.
 */
const ACK_TIMEOUT_MS = 5000;
/**
 * The slow barrier's pulse, which lasts until the test ends it (`endSlowPulse`), once its open has answered
 * 504: its ack comes after the timeout by the order of events, not by a race of two timers.
 */
const SLOW_PULSE_MS = 4000;
const RATE_LIMIT = 3;

const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
  - id: phone
    label: Phone line
    kind: simulated
    fail: no_carrier
  - id: slow
    label: Slow barrier
    kind: simulated
    pulse_ms: ${SLOW_PULSE_MS}
clock:
  check: none
`;

let keyFiles: KeyFileServer;
let database: TestDatabase;
let mosquitto: TestMosquitto | null = null;
let cluster: TestRabbitCluster | null = null;
let cloud: TestCloud;
let dir: string;
let configPath: string;
let deviceId: string;
/** number_id of each object, by its local id. */
let numbers: Record<'gate' | 'phone' | 'slow', number>;
let customerId: number;
let company: { org_id: number; secret: string };
let controller: Controller | null = null;
let driver: SimulatedDriver;
let endSlowPulse: () => void = () => {};
/** What the controller logged. */
const controllerLog: string[] = [];
/** Real pulses, except the slow barrier's, which waits for `endSlowPulse`. */
const sleep: Sleep = (ms) =>
  ms === SLOW_PULSE_MS
    ? new Promise<void>((resolve) => {
        endSlowPulse = resolve;
      })
    : realSleep(ms);

async function setUp(kind: BrokerKind): Promise<void> {
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    ackTimeoutMs: ACK_TIMEOUT_MS,
    env: {
      OPEN_RATE_LIMIT: String(RATE_LIMIT),
      GATELINK_DEV_KEYFILE_URL: keyFiles.template,
      ...(await brokerEnv(kind)),
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'gatelink-e2e-'));

  const created = await cloud.ops('POST', '/ops/devices', { label: 'Yard' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const device = created.body.device as { device_id: string; provisioning_code: string };
  const objectsFile = join(dir, 'objects.yaml');
  await writeFile(objectsFile, OBJECTS_YAML);
  configPath = join(dir, 'device.yaml');
  const provisioned = await provision({
    cloud: cloud.baseUrl,
    code: device.provisioning_code,
    configPath,
    objectsFrom: objectsFile,
  });
  deviceId = provisioned.response.device_id;
  expect(deviceId).toBe(device.device_id);
  const numberOf = (id: string) => provisioned.response.numbers.find((n) => n.id === id)!.number_id;
  numbers = { gate: numberOf('gate'), phone: numberOf('phone'), slow: numberOf('slow') };

  await startController();
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
  const paired = await pairDevice(cloud.ctx, { customerId, pairingCode: provisioned.response.pairing_code! });
  expect(paired.device_id).toBe(deviceId);
  company = await secretCompany(cloud, 'Courier Ltd');
}

async function tearDown(): Promise<void> {
  endSlowPulse();
  await controller?.stop();
  controller = null;
  await cloud?.stop();
  await mosquitto?.stop();
  mosquitto = null;
  await cluster?.stop();
  cluster = null;
  await database?.close();
  await keyFiles?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** The cloud's broker settings: none for the embedded one, a private Mosquitto's or cluster's for the others. */
async function brokerEnv(kind: BrokerKind): Promise<Record<string, string>> {
  if (kind === 'embedded') return {};
  const prefix = 'e2e/gl';
  if (kind === 'cluster') {
    cluster = await startRabbitCluster(prefix);
    return { ...clusterEnv(cluster), MQTT_TOPIC_PREFIX: prefix };
  }
  mosquitto = await startMosquitto(prefix);
  return { MQTT_URL: mosquitto.cloudUrl, MQTT_PUBLIC_URL: mosquitto.deviceUrl, MQTT_TOPIC_PREFIX: prefix };
}

/** Starts the controller from the config `provision()` wrote, with a fresh simulated driver to count openings. */
async function startController(): Promise<void> {
  const config = loadConfig(configPath);
  driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated'), sleep });
  controller = new Controller(config, {
    drivers: { simulated: driver },
    reconnectMinMs: 50,
    log: (line) => controllerLog.push(line),
  });
  await controller.start();
  // The device says it is online once it has subscribed to its commands.
  await waitFor(async () => (await deviceRow()).online, 'the controller to come online');
}

async function stopController(): Promise<void> {
  endSlowPulse();
  await controller?.stop();
  controller = null;
  await waitFor(async () => !(await deviceRow()).online, 'the controller to go offline');
}

async function deviceRow() {
  const answer = await cloud.ops('GET', '/ops/devices');
  const devices = answer.body.devices as { id: string; online: boolean }[];
  return devices.find((d) => d.id === deviceId)!;
}

/**
 * A fresh key for every test (the per-key rate limit then never carries over): a request made by the
 * company, claimed by the customer and granted on all three objects.
 */
async function newKey(signer?: Signer): Promise<number> {
  const answer = signer
    ? await cloud.signedCall('request', {}, signer)
    : await cloud.call('request', company);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const code = answer.body.code as string;
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId,
    objectIds: Object.values(numbers),
    keyExpiresAt: null,
  });
  return keyRef;
}

function open(
  keyRef: number,
  object: keyof typeof numbers,
  options: { actor?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return cloud.call(
    'open',
    { ...company, key_ref: keyRef, number_id: numbers[object], actor: options.actor ?? 'Driver 7' },
    options.headers,
  );
}

interface JournalEntry {
  id: number;
  barrier: { id: string; name: string } | null;
  number_id: number | null;
  number_label: string | null;
  company: { id: number; name: string; domain: string | null };
  actor: string;
  key_ref: number;
  outcome: string;
  detail: string | null;
  acked_at: string | null;
}

/** The journal of one key, oldest first, as the operator API shows it. */
/**
 * The key's journal entries, oldest first, once none is pending: `open` answers as soon as the controller's
 * ack is verified, and the ack's outcome reaches the journal a moment later.
 */
async function journal(keyRef: number): Promise<JournalEntry[]> {
  let entries: JournalEntry[] = [];
  await waitFor(async () => {
    entries = await journalNow(keyRef);
    return entries.every((entry) => entry.outcome !== 'pending');
  }, 'every entry of the key to have its outcome');
  return entries;
}

/** The key's journal entries, oldest first, as they are now. */
async function journalNow(keyRef: number): Promise<JournalEntry[]> {
  const answer = await cloud.ops('GET', `/ops/journal?device=${deviceId}&limit=500`);
  expect(answer.status).toBe(200);
  return (answer.body.entries as JournalEntry[]).filter((entry) => entry.key_ref === keyRef).reverse();
}

/**
 * Makes completing a journal entry fail, as while the database refuses writes: `complete_entry` is moved aside
 * and a stand-in that counts its calls (a sequence, which a rollback does not undo) and raises takes its place.
 */
async function refuseCompletions(): Promise<void> {
  const db = cloud.ctx.db;
  await sql`alter function complete_entry rename to complete_entry_unavailable`.execute(db);
  await sql`create sequence complete_entry_refusals`.execute(db);
  await sql`
    create function complete_entry(integer, uuid, text, text, text, text, timestamptz, timestamptz, uuid)
    returns integer language plpgsql as $body$
    begin
      perform nextval('complete_entry_refusals');
      raise exception 'the journal refuses writes';
    end
    $body$
  `.execute(db);
}

/** How many completions the stand-in refused. */
async function refusedCompletions(): Promise<number> {
  const result = await sql<{ count: string }>`
    select case when is_called then last_value else 0 end as count from complete_entry_refusals
  `.execute(cloud.ctx.db);
  return Number(result.rows[0]?.count ?? 0);
}

async function acceptCompletions(): Promise<void> {
  const db = cloud.ctx.db;
  await sql`
    drop function complete_entry(integer, uuid, text, text, text, text, timestamptz, timestamptz, uuid)
  `.execute(db);
  await sql`drop sequence complete_entry_refusals`.execute(db);
  await sql`alter function complete_entry_unavailable rename to complete_entry`.execute(db);
}

const opened = (entries: JournalEntry[]) => entries.filter((entry) => entry.outcome === 'opened').length;

describe.each(CLUSTER_KINDS)('open through the %s broker to a real controller', (kind) => {
  const skip = brokerKindSkipReason(kind);
  if (skip) {
    it.skip(skip, () => {});
    return;
  }

  beforeAll(() => setUp(kind));
  afterAll(tearDown);

  it('opens: 200 {ok: 1, id}, and the journal names actor, company, barrier and object, acknowledged', async () => {
    const keyRef = await newKey();
    const before = driver.pulses.get('gate') ?? 0;
    const answer = await open(keyRef, 'gate', { actor: '  Anna, shift B  ' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ ok: 1, id: expect.any(Number) });
    expect(driver.pulses.get('gate')).toBe(before + 1);

    const entries = await journal(keyRef);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      id: answer.body.id,
      outcome: 'opened',
      detail: null,
      actor: 'Anna, shift B',
      company: { id: company.org_id, name: 'Courier Ltd', domain: null },
      barrier: { id: deviceId, name: 'Yard' },
      number_id: numbers.gate,
      number_label: 'Main gate',
    });
    expect(entries[0]!.acked_at).toEqual(expect.any(String));
  });

  it('two openings of one object within its pulse both answer 200, journaled as two openings of one pulse', async () => {
    const [first, second] = [await newKey(), await newKey()];
    const pulses = driver.pulses.get('slow') ?? 0;
    controllerLog.length = 0;
    const one = open(first, 'slow', { actor: 'Anna' });
    await waitFor(() => driver.isActive('slow'), 'the pulse under way');
    const two = open(second, 'slow', { actor: 'Ben' });
    await waitFor(
      () => controllerLog.some((line) => line.includes('joins the pulse')),
      'the second joining it',
    );
    endSlowPulse();
    const answers = await Promise.all([one, two]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(driver.pulses.get('slow')).toBe(pulses + 1);
    // The outcomes reach the journal a moment after the answers.
    await Promise.all([journal(first), journal(second)]);
    const [started, joined] = await Promise.all(
      answers.map((answer) =>
        cloud.ctx.db
          .selectFrom('journal')
          .select(['command_id', 'outcome', 'ack'])
          .where('id', '=', answer.body.id as number)
          .executeTakeFirstOrThrow(),
      ),
    );
    expect([started!.outcome, joined!.outcome]).toEqual(['opened', 'opened']);
    expect((joined!.ack as { pulse?: string }).pulse).toBe(started!.command_id);
    expect(started!.ack).not.toHaveProperty('pulse');
  });

  it('502 device_error with detail no_carrier when the controller reports the failure; the journal says so', async () => {
    const keyRef = await newKey();
    const answer = await open(keyRef, 'phone');
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ error: 'device_error', detail: 'no_carrier' });
    const entries = await journal(keyRef);
    expect(entries).toMatchObject([
      { outcome: 'device_error', detail: 'no_carrier', number_label: 'Phone line' },
    ]);
    expect(entries[0]!.acked_at).not.toBeNull();
  });

  it('504 device_timeout when the ack is late; the late ack still completes the journal entry', async () => {
    const keyRef = await newKey();
    const answer = await open(keyRef, 'slow');
    expect(answer.status).toBe(504);
    expect(answer.body.error).toBe('device_timeout');
    expect(await journal(keyRef)).toMatchObject([{ outcome: 'device_timeout', acked_at: null }]);

    endSlowPulse();
    await waitFor(async () => (await journal(keyRef))[0]!.outcome !== 'device_timeout', 'the late ack');
    const [entry] = await journal(keyRef);
    expect(entry).toMatchObject({ outcome: 'opened', number_label: 'Slow barrier' });
    expect(entry!.detail).toMatch(/after the caller's timeout/);
    expect(entry!.acked_at).toEqual(expect.any(String));
  });

  it('[attack:idempotency.double-open] Idempotency-Key: a retry after a 504 gets the same 504 and the gate opens only once', async () => {
    const keyRef = await newKey();
    const before = driver.pulses.get('slow') ?? 0;
    const headers = { 'idempotency-key': `open-${keyRef}` };
    const first = await open(keyRef, 'slow', { headers });
    expect(first.status).toBe(504);
    // Wait for the late ack: the object is free again, so a retry that went to the gate would open it.
    endSlowPulse();
    await waitFor(async () => (await journal(keyRef))[0]!.outcome === 'opened', 'the late ack');

    const retry = await open(keyRef, 'slow', { headers });
    expect(retry.status).toBe(504);
    expect(retry.body).toEqual(first.body);
    expect(driver.pulses.get('slow')).toBe(before + 1);
    const entries = await journal(keyRef);
    expect(entries).toHaveLength(1);
    expect(opened(entries)).toBe(1);
  });

  it('[attack:idempotency.body-swap] Idempotency-Key: the same key with a different body answers 422 and does not open', async () => {
    const keyRef = await newKey();
    const headers = { 'idempotency-key': `open-${keyRef}` };
    expect((await open(keyRef, 'gate', { headers })).status).toBe(200);
    const before = driver.pulses.get('gate') ?? 0;
    const conflict = await open(keyRef, 'gate', { headers, actor: 'Somebody else' });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error).toBe('idempotency_conflict');
    expect(driver.pulses.get('gate')).toBe(before);
    expect(await journal(keyRef)).toHaveLength(1);
  });

  it(`[attack:open.rate-limit] rate limit: the open after ${RATE_LIMIT} within a minute answers 429 with Retry-After, journalled`, async () => {
    const keyRef = await newKey();
    for (let i = 0; i < RATE_LIMIT; i++) expect((await open(keyRef, 'gate')).status).toBe(200);
    const before = driver.pulses.get('gate') ?? 0;
    const limited = await open(keyRef, 'gate');
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limit');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(driver.pulses.get('gate')).toBe(before);
    const entries = await journal(keyRef);
    expect(entries.map((entry) => entry.outcome)).toEqual([
      ...Array.from({ length: RATE_LIMIT }, () => 'opened'),
      'rate_limit',
    ]);
  });

  it('[attack:open.after-revocation] a key revoked after an open answers 403 revoked, and the attempt is journalled', async () => {
    const keyRef = await newKey();
    expect((await open(keyRef, 'gate')).status).toBe(200);
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    const before = driver.pulses.get('gate') ?? 0;
    const refused = await open(keyRef, 'gate', { actor: 'Late driver' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('revoked');
    expect(driver.pulses.get('gate')).toBe(before);
    expect(await journal(keyRef)).toMatchObject([
      { outcome: 'opened' },
      { outcome: 'revoked', actor: 'Late driver', acked_at: null },
    ]);
  });

  it('a company signing with its domain key opens too, and the journal shows its domain', async () => {
    const signed = await signatureCompany(cloud, keyFiles, 'courier.example');
    const keyRef = await newKey(signed.signer);
    const before = driver.pulses.get('gate') ?? 0;
    const answer = await cloud.signedCall(
      'open',
      { key_ref: keyRef, number_id: numbers.gate, actor: 'Signed driver' },
      signed.signer,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ ok: 1, id: expect.any(Number) });
    expect(driver.pulses.get('gate')).toBe(before + 1);
    expect(await journal(keyRef)).toMatchObject([
      { outcome: 'opened', actor: 'Signed driver', company: { id: signed.id, domain: 'courier.example' } },
    ]);
  });

  it('[attack:open.queued-for-later] 503 device_offline while the controller is stopped; nothing is queued for its return', async () => {
    const keyRef = await newKey();
    await stopController();
    const answer = await open(keyRef, 'gate', { actor: 'Offline driver' });
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe('device_offline');
    expect(await journal(keyRef)).toMatchObject([{ outcome: 'device_offline', acked_at: null }]);

    // Back within the command's lifetime: a queued command would arrive first and open the gate.
    await startController();
    const later = await open(keyRef, 'gate', { actor: 'Next driver' });
    expect(later.status).toBe(200);
    expect(driver.pulses.get('gate')).toBe(1);
    const entries = await journal(keyRef);
    expect(entries).toMatchObject([
      { outcome: 'device_offline', actor: 'Offline driver', acked_at: null },
      { outcome: 'opened', actor: 'Next driver' },
    ]);
    // What the restarted controller last executed is the new command.
    expect(controller?.status.current.last_command).toMatchObject({ object: 'gate', outcome: 'opened' });
  });

  it('an ack the journal cannot take yet stays with the controller or the broker, and reaches the journal once it can', async () => {
    const keyRef = await newKey();
    const before = driver.pulses.get('gate') ?? 0;
    // Completing an entry fails, as it does while the database refuses writes.
    await refuseCompletions();
    let answer: Answer;
    try {
      answer = await open(keyRef, 'gate', { actor: 'Careful driver' });
      // The gate opened and the controller said so: the company hears it at once.
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      // The ack was refused and came again: the cloud tried to write it twice.
      await waitFor(async () => (await refusedCompletions()) >= 2, 'the ack to come again');
      expect(await journalNow(keyRef)).toMatchObject([{ id: answer.body.id, outcome: 'pending' }]);
      if (kind === 'embedded') {
        // The broker refused the ack, so the controller keeps it and sends it again.
        expect(controller!.outbox.size).toBe(1);
      }
      // Mosquitto took it from the controller and keeps it for the cloud's session, which withheld its PUBACK:
      // it comes again each time the session resumes (cloud/links/controllers/external-delivery.ts).
    } finally {
      await acceptCompletions();
    }
    expect(await journal(keyRef)).toMatchObject([
      { id: answer.body.id, outcome: 'opened', actor: 'Careful driver', acked_at: expect.any(String) },
    ]);
    await waitFor(async () => controller!.outbox.size === 0, 'the controller to hear its ack was taken');
    expect(driver.pulses.get('gate')).toBe(before + 1);
  });
});
