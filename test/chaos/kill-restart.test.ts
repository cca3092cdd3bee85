import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { AssembledContext } from '../../cloud/context.js';
import { systemClock } from '../../cloud/foundation/clock.js';
import { type DatabaseHandle, openDatabase } from '../../cloud/foundation/db/database.js';
import { CloudMetrics } from '../../cloud/foundation/metrics/cloud-metrics.js';
import { Foreground } from '../../cloud/foundation/priority/foreground.js';
import { logMailer } from '../../cloud/links/mail/mailer.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { CompanyCache } from '../../cloud/rules/call-auth/company-cache.js';
import { NonceLedger } from '../../cloud/rules/call-auth/nonces.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { generateVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { provision } from '../../device/cli/provision.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { BROKER_KINDS, type BrokerKind, brokerKindSkipReason } from '../support/broker-env.js';
import { localCloudConfig } from '../support/cloud.js';
import { type CloudProcess, startCloudProcess } from '../support/cloud-process.js';
import {
  type ControllerProcess,
  readGateLog,
  startControllerProcess,
} from '../support/controller-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { freePort } from '../support/ports.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Companies keep opening while the broker restarts, the controller is killed with SIGKILL and started again,
 * and a cloud instance is killed with SIGKILL and started again on the same database. Afterwards, as a customer
 * and a company would check it: every call that got an answer has exactly one journal entry with a final
 * outcome, no command was performed twice at the gate, and every 200 matches one operation at the gate: its
 * own, or the pulse under way it joined (docs/design.md section 7).
 *
 * Every process is real (`npm run cloud`, the controller daemon, Mosquitto); the gate is the simulated output
 * with a log that survives the controller's death (test/support/recording-controller.ts). Clients call as a
 * careful company does: with an Idempotency-Key, retrying the same key when the connection fails or the first
 * call is still in flight.
 */

const PREFIX = 'chaos/gl';
const CLIENTS = 4;
/** Openings to wait for between two blows, so that each blow lands amid working traffic. */
const OPENINGS_PER_PHASE = 8;
/** A company's patience for one call, retries included: past it the call counts as unanswered. */
const CALL_PATIENCE_MS = 120_000;

const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 30
clock:
  check: none
`;

interface Call {
  actor: string;
  key: string;
  answer: { status: number; body: Record<string, unknown> } | null;
}

interface JournalRow {
  id: number;
  actor: string;
  outcome: string | null;
  command_id: string | null;
  pulse: string | null;
}

/** What a test run needs: the folders, the database, the broker and the processes on them. */
class ChaosSystem {
  readonly dir = mkdtempSync(join(tmpdir(), 'gatelink-chaos-'));
  readonly dataDir = join(this.dir, 'data');
  readonly gateLog = join(this.dir, 'gate.log');
  readonly configPath = join(this.dir, 'device.yaml');
  readonly token = randomBytes(24).toString('hex');
  cloud: CloudProcess | null = null;
  controller: ControllerProcess | null = null;
  companyId = 0;
  secret = '';
  keyRef = 0;
  numberId = 0;
  deviceId = '';

  constructor(
    readonly kind: BrokerKind,
    readonly env: Record<string, string>,
    readonly database: TestDatabase | null,
    readonly mosquitto: TestMosquitto | null,
  ) {}

  static async open(kind: BrokerKind): Promise<ChaosSystem> {
    const database = process.env.DATABASE_URL ? await createTestDatabase() : null;
    const mosquitto = kind === 'external' ? await startMosquitto(PREFIX) : null;
    const env: Record<string, string> = {
      PORT: String(await freePort()),
      MQTT_PORT: String(await freePort()),
      MQTT_TOPIC_PREFIX: PREFIX,
      OPEN_RATE_LIMIT: '10000',
      ...(database ? { DATABASE_URL: database.url! } : {}),
      ...(mosquitto ? { MQTT_URL: mosquitto.cloudUrl, MQTT_PUBLIC_URL: mosquitto.deviceUrl } : {}),
    };
    const system = new ChaosSystem(kind, env, database, mosquitto);
    Object.assign(env, { GATELINK_DATA_DIR: system.dataDir, OPERATOR_TOKEN: system.token });
    return system;
  }

  async startCloud(): Promise<void> {
    this.cloud = await startCloudProcess(this.env);
  }

  async startController(): Promise<void> {
    this.controller = await startControllerProcess(this.configPath, this.gateLog);
    await this.waitFor(async () => (await this.device()).online, 'the controller to come online');
  }

  get baseUrl(): string {
    return this.cloud!.baseUrl;
  }

  async ops(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (response.status !== 200) throw new Error(`${method} ${path}: ${JSON.stringify(answer)}`);
    return answer;
  }

  async device(): Promise<{ id: string; online: boolean }> {
    const { devices } = (await this.ops('GET', '/ops/devices')) as {
      devices: { id: string; online: boolean }[];
    };
    return devices.find((d) => d.id === this.deviceId)!;
  }

  /** The cloud restarts under these waits, so a check that fails meanwhile is tried again. */
  waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
    return waitFor(check, what, 90_000, { retryErrors: true });
  }

  /**
   * A company, a controller provisioned as an installer does, and a key the customer granted on its gate.
   * The customer's steps run on the database itself, with the cloud stopped (the embedded one allows one
   * process), since the customer application is not built yet.
   */
  async setUp(): Promise<void> {
    await this.startCloud();
    const { company } = (await this.ops('POST', '/ops/companies', { name: 'Chaos Couriers' })) as {
      company: { id: number };
    };
    this.companyId = company.id;
    await this.ops('POST', `/ops/companies/${company.id}/approve`);
    this.secret = (
      (await this.ops('POST', `/ops/companies/${company.id}/secret`)) as { secret: string }
    ).secret;
    const { device } = (await this.ops('POST', '/ops/devices', { label: 'Yard' })) as {
      device: { device_id: string; provisioning_code: string };
    };
    const objectsFile = join(this.dir, 'objects.yaml');
    writeFileSync(objectsFile, OBJECTS_YAML);
    const provisioned = await provision({
      cloud: this.baseUrl,
      code: device.provisioning_code,
      configPath: this.configPath,
      objectsFrom: objectsFile,
    });
    this.deviceId = device.device_id;
    this.numberId = provisioned.response.numbers[0]!.number_id;
    const request = await this.company('request', {});
    const code = request.body.code as string;
    await this.cloud!.stop();

    await this.withDatabase(async (ctx) => {
      const customer = await createCustomer(ctx, { displayName: 'Chaos Customer' });
      await pairDevice(ctx, { customerId: customer.id, pairingCode: provisioned.response.pairing_code! });
      await claimRequest(ctx, { code, customerId: customer.id });
      const issued = await issueAccessKey(ctx, {
        code,
        customerId: customer.id,
        deviceId: this.deviceId,
        objectIds: [this.numberId],
        keyExpiresAt: null,
      });
      this.keyRef = issued.keyRef;
    });
    await this.startCloud();
    await this.startController();
  }

  /** The cloud's database opened here, while no cloud runs on it. */
  async withDatabase<T>(work: (ctx: AssembledContext) => Promise<T>): Promise<T> {
    const handle: DatabaseHandle = await openDatabase(
      this.database ? { url: this.database.url! } : { dataDir: join(this.dataDir, 'db') },
    );
    const ctx: AssembledContext = {
      config: localCloudConfig(this.dataDir, { MQTT_TOPIC_PREFIX: PREFIX }),
      db: handle.db,
      clock: systemClock,
      log: recordingLogger(),
      serviceKey: SigningKey.generate(),
      vapid: generateVapidKey(),
      fetchKeyFile: async () => ({ ok: false, reason: 'unreachable', message: '' }),
      resolveHost: async () => [],
      companyCache: new CompanyCache(systemClock),
      nonces: new NonceLedger(handle.db, systemClock),
      mailer: logMailer(recordingLogger()),
      metrics: new CloudMetrics(),
      foreground: new Foreground(),
      baseUrl: () => this.baseUrl,
    };
    try {
      return await work(ctx);
    } finally {
      await handle.close();
    }
  }

  async company(action: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const response = await fetch(`${this.baseUrl}/api/company.php?a=${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ org_id: this.companyId, secret: this.secret, ...body }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async close(): Promise<void> {
    await this.controller?.kill();
    await this.cloud?.kill();
    await this.mosquitto?.stop();
    await this.database?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Companies opening one call after another, each call retried with its key until it has an answer. */
class Clients {
  readonly calls: Call[] = [];
  #stopped = false;
  #running: Promise<void>[] = [];

  constructor(private readonly system: ChaosSystem) {}

  start(count: number): void {
    for (let n = 0; n < count; n++) this.#running.push(this.#client(n));
  }

  get answered(): Call[] {
    return this.calls.filter((call) => call.answer !== null);
  }

  get opened(): Call[] {
    return this.calls.filter((call) => call.answer?.status === 200);
  }

  async waitForAnswers(more: number): Promise<void> {
    const target = this.answered.length + more;
    await this.system.waitFor(async () => this.answered.length >= target, `${more} more answers`);
  }

  async waitForOpenings(more: number): Promise<void> {
    const target = this.opened.length + more;
    await this.system.waitFor(async () => this.opened.length >= target, `${more} more openings`);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#running);
  }

  async #client(n: number): Promise<void> {
    for (let i = 0; !this.#stopped; i++) {
      const call: Call = { actor: `client ${n} call ${i}`, key: randomUUID(), answer: null };
      this.calls.push(call);
      call.answer = await this.#callUntilAnswered(call);
    }
  }

  async #callUntilAnswered(call: Call): Promise<Call['answer']> {
    const deadline = Date.now() + CALL_PATIENCE_MS;
    const body = { key_ref: this.system.keyRef, number_id: this.system.numberId, actor: call.actor };
    while (Date.now() < deadline) {
      try {
        const answer = await this.system.company('open', body, { 'idempotency-key': call.key });
        if (answer.body.error !== 'idempotency_in_progress') return answer;
      } catch {
        // The cloud is down or the connection broke mid-call: the same key again, as a careful client does.
      }
      await sleep(200);
    }
    return null;
  }
}

describe.each(BROKER_KINDS)(
  '[attack:chaos.kill-restart] openings through kills and restarts, %s broker',
  (kind) => {
    const skip = brokerKindSkipReason(kind);
    let system: ChaosSystem | null = null;

    afterAll(async () => {
      await system?.close();
    });

    it.skipIf(skip !== null)(
      'answers every call once, journals it once, and never opens twice for one command',
      { timeout: 400_000 },
      async () => {
        system = await ChaosSystem.open(kind);
        await system.setUp();
        const clients = new Clients(system);
        clients.start(CLIENTS);
        await clients.waitForOpenings(OPENINGS_PER_PHASE);

        await system.controller!.kill();
        await clients.waitForAnswers(CLIENTS);
        await system.startController();
        await clients.waitForOpenings(OPENINGS_PER_PHASE);

        if (system.mosquitto) await system.mosquitto.restart();
        else await restartCloud(system);
        await clients.waitForOpenings(OPENINGS_PER_PHASE);

        await restartCloud(system);
        await clients.waitForOpenings(OPENINGS_PER_PHASE);
        await clients.stop();

        await waitUntilSettled(system);
        await system.controller!.stop();
        await system.cloud!.stop();
        const rows = await system.withDatabase((ctx) =>
          ctx.db
            .selectFrom('journal')
            .select(['id', 'actor', 'outcome', 'command_id'])
            // A command that joined a pulse under way names the command whose operation it shared.
            .select(sql<string | null>`ack ->> 'pulse'`.as('pulse'))
            .orderBy('id')
            .execute(),
        );
        const gate = readGateLog(system.gateLog);

        report(kind, clients.calls, gate);
        expectEveryCallJournalledOnce(clients.calls, rows);
        expectEveryOpeningOnceAtTheGate(clients.calls, rows, gate);
      },
    );
  },
);

async function restartCloud(system: ChaosSystem): Promise<void> {
  await system.cloud!.kill();
  await system.startCloud();
}

/** Until no entry of the company is pending: the surviving instance settles what a killed one left. */
async function waitUntilSettled(system: ChaosSystem): Promise<void> {
  await system.waitFor(async () => {
    const { entries } = (await system.ops('GET', `/ops/journal?company=${system.companyId}&limit=500`)) as {
      entries: { outcome: string }[];
    };
    return entries.every((entry) => entry.outcome !== 'pending');
  }, 'every opening to be settled');
}

/** One line of what the run went through, for whoever reads the suite's output. */
function report(kind: BrokerKind, calls: Call[], gate: string[]): void {
  const statuses = new Map<string, number>();
  for (const call of calls) {
    const { status, body } = call.answer ?? { status: 0, body: {} };
    const label = call.answer
      ? [status, body.error ?? 'ok', body.detail].filter(Boolean).join(' ')
      : 'unanswered';
    statuses.set(label, (statuses.get(label) ?? 0) + 1);
  }
  const tally = [...statuses].map(([label, count]) => `${count} × ${label}`).join(', ');
  process.stdout.write(
    `chaos (${kind} broker): ${calls.length} calls: ${tally}; ${gate.length} operations at the gate\n`,
  );
}

function expectEveryCallJournalledOnce(calls: Call[], rows: JournalRow[]): void {
  const unanswered = calls.filter((call) => call.answer === null);
  expect(unanswered.map((call) => call.actor)).toEqual([]);
  const opened = calls.filter((call) => call.answer?.status === 200);
  expect(opened.length).toBeGreaterThanOrEqual(4 * OPENINGS_PER_PHASE);
  for (const call of calls) {
    const entries = rows.filter((row) => row.actor === call.actor);
    const { status, body } = call.answer!;
    expect([200, 502, 503, 504], `${call.actor}: ${JSON.stringify(body)}`).toContain(status);
    expect(entries, `${call.actor} answered ${status}`).toHaveLength(1);
    expect(entries[0]!.outcome, call.actor).not.toBeNull();
    if (status === 200) expect(entries[0], call.actor).toMatchObject({ id: body.id, outcome: 'opened' });
  }
}

function expectEveryOpeningOnceAtTheGate(calls: Call[], rows: JournalRow[], gate: string[]): void {
  const times = new Map<string, number>();
  for (const id of gate) times.set(id, (times.get(id) ?? 0) + 1);
  const twice = [...times].filter(([, count]) => count > 1);
  expect(twice).toEqual([]);
  expect(times.has('unknown')).toBe(false);
  for (const call of calls.filter((c) => c.answer?.status === 200)) {
    const entry = rows.find((row) => row.id === call.answer!.body.id)!;
    expect(times.get(entry.pulse ?? entry.command_id!), `the opening of ${call.actor} at the gate`).toBe(1);
  }
}
