import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { sweepGates, sweepNotMoved } from '../../cloud/rules/positions/gate-sweeps.js';
import { sealFinalEntries } from '../../cloud/rules/receipts/sealing.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import type { Controller } from '../../device/runtime/controller.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { setCallback } from '../support/event-company.js';
import { parseSamples, sampleValue } from '../support/prometheus-text.js';
import { provisionedConfig, startSimulatedController } from '../support/provisioned-gate.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The whole opening, seen and proven (issue 28; docs/design.md sections 5.2, 5.3, 7.5 and 12.5): a real
 * controller runtime on simulated outputs whose simulated sensors follow the pulses, the real cloud on a fake
 * clock, a company receiving its events at its callback address and a customer reading the journal and
 * exporting its receipts. The gates move after short real delays; every wait is on a condition, never on time.
 */
const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
    sensor: { type: simulated, open_after_ms: 50, mode: auto-close, close_after_ms: 200 }
  - id: stuck
    label: Back gate
    kind: simulated
    pulse_ms: 0
    sensor: { type: simulated, open_after_ms: 50, stuck: true }
  - id: garage
    label: Garage door
    kind: simulated
    pulse_ms: 0
    sensor: { type: simulated, open_after_ms: 50, mode: toggle }
clock:
  check: none
`;
/** A controller of the release before sensors: its objects have none. */
const OLD_OBJECTS_YAML = `
objects:
  - id: gate
    label: Yard gate
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;
const MIN = 60_000;
/** The barriers' default move timeout (docs/design.md section 7.5). */
const MOVE_TIMEOUT_S = 30;

interface Barrier {
  deviceId: string;
  configPath: string;
  dir: string;
  numbers: Record<string, number>;
}

describe('the story of a gate, from the opening to its receipts', () => {
  const clock = new FakeClock(Date.now());
  /**
   * How far the cloud's clock was moved ahead of the real one. The controllers' wall clock is moved with it,
   * as a controller's clock agrees with the cloud's; neither ever goes back (the delivery leases would not
   * expire for a clock set back).
   */
  let ahead = 0;
  const advance = (ms: number) => {
    ahead += ms;
    clock.advance(ms);
  };
  /** The cloud's clock catches up with the real time gone by, as the controllers' does on its own. */
  const catchUp = () => clock.set(new Date(Math.max(clock.now().getTime(), Date.now() + ahead)));
  let database: TestDatabase;
  let cloud: TestCloud;
  let receiver: WebhookReceiver;
  let company: { org_id: number; secret: string };
  let customerId: number;
  let customer: BrowserClient;
  let barrier: Barrier;
  let old: Barrier;
  const controllers: Controller[] = [];
  /** The entry of case 1, whose receipts case 6 checks. */
  let closedEntry: number;
  let tmp: string;

  async function provisioned(objectsYaml: string, ids: string[]): Promise<Barrier> {
    const { dir, configPath, response, numberOf } = await provisionedConfig(cloud, objectsYaml);
    await pairDevice(cloud.ctx, { customerId, pairingCode: response.pairing_code! });
    const numbers = Object.fromEntries(ids.map((id) => [id, numberOf(id)]));
    return { deviceId: response.device_id, configPath, dir, numbers };
  }

  async function startController(on: Barrier): Promise<Controller> {
    const { controller } = await startSimulatedController(cloud, on.configPath, {
      now: () => Date.now() + ahead,
    });
    controllers.push(controller);
    return controller;
  }

  async function stopController(controller: Controller): Promise<void> {
    await controller.stop();
    controllers.splice(controllers.indexOf(controller), 1);
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({
      database,
      clock,
      eventDelivery: { allowPrivateAddresses: true, timeoutMs: 2000 },
    });
    receiver = new WebhookReceiver();
    const published = await fetch(`${cloud.baseUrl}/.well-known/service.json`);
    await receiver.start(((await published.json()) as { key: string }).key);
    company = await secretCompany(cloud, 'Demo Cleaning Ltd');
    await setCallback(cloud.ctx, company.org_id, receiver.url);
    customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
    customer = await BrowserClient.signedIn(cloud, customerId);
    barrier = await provisioned(OBJECTS_YAML, ['gate', 'stuck', 'garage']);
    old = await provisioned(OLD_OBJECTS_YAML, ['gate']);
    await startController(barrier);
    await startController(old);
    tmp = mkdtempSync(join(tmpdir(), 'gatelink-gate-story-'));
  });

  afterAll(async () => {
    for (const controller of [...controllers].reverse()) await controller.stop();
    await cloud?.stop();
    await receiver?.stop();
    await database?.close();
    for (const dir of [barrier?.dir, old?.dir, tmp]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A key on one object of `on`: requested by the company, claimed and granted by the customer. */
  async function keyOn(on: Barrier, object: string): Promise<number> {
    const answer = await cloud.call('request', { ...company, ref: `ORD-${object}` });
    const code = answer.body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: on.deviceId,
      objectIds: [on.numbers[object]!],
      keyExpiresAt: null,
    });
    return keyRef;
  }

  /**
   * `a=open` on an object, answered once the controller acknowledged it; the entry it journalled, once
   * completed. The cloud's clock catches up first: the controller checks a command's lifetime on its own clock.
   */
  async function open(
    on: Barrier,
    object: string,
    actor: string,
  ): Promise<{ status: number; entry: number }> {
    catchUp();
    const keyRef = await keyOn(on, object);
    const answer = await cloud.call('open', {
      ...company,
      key_ref: keyRef,
      number_id: on.numbers[object]!,
      actor,
    });
    const row = await cloud.ctx.db
      .selectFrom('journal')
      .select('id')
      .where('key_id', '=', keyRef)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    // The answer goes out on the ack; the entry's outcome is written beside it.
    if (answer.status === 200) {
      await waitFor(async () => (await entryRow(row.id)).outcome !== null, `entry ${row.id} to be completed`);
    }
    return { status: answer.status, entry: row.id };
  }

  const entryRow = (id: number) =>
    cloud.ctx.db.selectFrom('journal').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  const objectRow = (on: Barrier, object: string) =>
    cloud.ctx.db
      .selectFrom('device_objects')
      .selectAll()
      .where('id', '=', on.numbers[object]!)
      .executeTakeFirstOrThrow();

  /** The events the company received about one journal entry, in the order they were sent. */
  const eventsOf = (entry: number) =>
    receiver.events().filter((event) => (event.data as { journal_id?: number }).journal_id === entry);

  async function waitForEvent(type: string, entry?: number): Promise<void> {
    await waitFor(
      () =>
        receiver
          .events()
          .some(
            (event) =>
              event.type === type &&
              (entry === undefined || (event.data as { journal_id?: number }).journal_id === entry),
          ),
      `the company to receive ${type}`,
    );
  }

  async function journalLine(on: Barrier, entry: number): Promise<string> {
    const page = await customer.get(`/barriers/${on.deviceId}/journal`);
    expect(page.status).toBe(200);
    const start = page.html.indexOf(`id="entry-${entry}"`);
    expect(start, `entry ${entry} on the journal page`).toBeGreaterThan(-1);
    const end = page.html.indexOf('</li>', page.html.indexOf('<ol', start) + 1);
    return visibleText(page.html.slice(start, end > start ? end : undefined)).replace(/\s+/g, ' ');
  }

  it('1. an opening whose gate opens then closes is answered on the ack, told in steps and read as a story', async () => {
    const { status, entry } = await open(barrier, 'gate', 'Anna, shift 2');
    expect(status).toBe(200);
    closedEntry = entry;
    await waitForEvent('open.gate_closed', entry);
    expect(eventsOf(entry).map((event) => event.type)).toEqual([
      'open.succeeded',
      'open.gate_opened',
      'open.gate_closed',
    ]);
    const row = await entryRow(entry);
    expect(row.gate_opened_at).not.toBeNull();
    expect(row.gate_closed_at).not.toBeNull();
    const line = await journalLine(barrier, entry);
    expect(line).toMatch(/Gate open after .+ · closed after /);
  });

  it('2. an opening whose gate never moves is marked so once its barrier’s move timeout passed', async () => {
    const { status, entry } = await open(barrier, 'stuck', 'Ben, van 7');
    expect(status).toBe(200);
    const { move_timeout_s } = await cloud.ctx.db
      .selectFrom('devices')
      .select('move_timeout_s')
      .where('id', '=', barrier.deviceId)
      .executeTakeFirstOrThrow();
    advance(move_timeout_s * 1000 + 1000);
    expect(await sweepNotMoved(cloud.ctx)).toBe(1);
    await waitForEvent('open.gate_not_moved', entry);
    expect(eventsOf(entry).map((event) => event.type)).toEqual(['open.succeeded', 'open.gate_not_moved']);
    expect((await entryRow(entry)).gate_not_moved_at).not.toBeNull();
    expect(await journalLine(barrier, entry)).toContain('Relay fired, gate did not move');
  });

  it('3. a gate left open past its limit alerts the company and the customer, and its closing is told', async () => {
    const opening = await open(barrier, 'garage', 'Cleo, night round');
    expect(opening.status).toBe(200);
    await waitForEvent('open.gate_opened', opening.entry);
    advance(10 * MIN + 30_000);
    expect(await sweepGates(cloud.ctx)).toEqual({ notMoved: 0, leftOpen: 1 });
    await waitForEvent('gate.left_open', opening.entry);
    const list = visibleText((await customer.get('/barriers')).html).replace(/\s+/g, ' ');
    expect(list).toContain('Garage door left open');

    const closing = await open(barrier, 'garage', 'Cleo, night round');
    expect(closing.status).toBe(200);
    await waitForEvent('gate.closed', opening.entry);
    expect(eventsOf(opening.entry).map((event) => event.type)).toEqual([
      'open.succeeded',
      'open.gate_opened',
      'gate.left_open',
      'open.gate_closed',
      'gate.closed',
    ]);
    expect((await objectRow(barrier, 'garage')).left_open_at).toBeNull();
    const after = visibleText((await customer.get('/barriers')).html);
    expect(after).not.toContain('Garage door left open');
    // The opening that closed the gate found it open: there was no opening to see, so it is never marked as
    // one whose gate did not move.
    advance(MOVE_TIMEOUT_S * 1000 + 1000);
    await sweepNotMoved(cloud.ctx);
    expect((await entryRow(closing.entry)).gate_not_moved_at).toBeNull();
  });

  /**
   * The controller dates a sensor's first reading after a start at that start (docs/design.md section 7.5); the
   * cloud takes a newer report of the position it already has as a repeat, so the gate stays open since the
   * change it saw, never closed in between, and the left-open alert keeps counting from then.
   */
  it('4. a controller restarted while its gate is open reports it still open', async () => {
    const opening = await open(barrier, 'garage', 'Dan, early shift');
    expect(opening.status).toBe(200);
    await waitForEvent('open.gate_opened', opening.entry);
    const before = await objectRow(barrier, 'garage');
    expect(before.position).toBe('open');
    const received = await reportsReceived();

    await stopController(controllers[0]!);
    await startController(barrier);
    // On connect the controller reports each of its three sensors' positions.
    await waitFor(async () => (await reportsReceived()) >= received + 3, 'the positions reported on connect');
    const after = await objectRow(barrier, 'garage');
    expect(after.position).toBe('open');
    expect(after.position_since).toEqual(before.position_since);
    expect((await entryRow(opening.entry)).gate_closed_at).toBeNull();
  });

  /** Position reports the cloud took, as applied or as a repeat of the stored position. */
  async function reportsReceived(): Promise<number> {
    const samples = parseSamples(await cloud.ctx.metrics.text());
    const count = (result: string) =>
      sampleValue(samples, 'gatelink_position_reports_total', { result }) ?? 0;
    return count('repeat') + count('applied');
  }

  it('5. a controller of the release before sensors still opens, and its entry is final at once', async () => {
    const { status, entry } = await open(old, 'gate', 'Eve, day shift');
    expect(status).toBe(200);
    expect(await sealFinalEntries(cloud.ctx)).toBeGreaterThan(0);
    const row = await entryRow(entry);
    expect(row.chain_seq).not.toBeNull();
    expect(row.gate_opened_at).toBeNull();
    expect(row.gate_closed_at).toBeNull();
    expect(row.gate_not_moved_at).toBeNull();
    expect(row.gate_reports).toBeNull();
    await waitForEvent('open.succeeded', entry);
    expect(eventsOf(entry).map((event) => event.type)).toEqual(['open.succeeded']);
    const line = await journalLine(old, entry);
    expect(line).not.toMatch(/gate open after|did not move/i);
  });

  it('6. the customer’s export verifies and carries the signed ack and position reports of the opening', async () => {
    await sealFinalEntries(cloud.ctx);
    expect((await entryRow(closedEntry)).chain_seq).not.toBeNull();
    const answer = await customer.get(`/barriers/${barrier.deviceId}/journal.receipts.jsonl`);
    expect(answer.status).toBe(200);
    const [, ...lines] = answer.html.split('\n').filter((line) => line !== '');
    const sealed = lines.map(
      (line) =>
        JSON.parse(line) as {
          entry: {
            id: number;
            ack: { device_id: string; outcome: string; sig: string } | null;
            reports: { type: string; position: string; object: string; sig: string }[];
          };
        },
    );
    const opening = sealed.find((line) => line.entry.id === closedEntry)?.entry;
    expect(opening?.ack).toMatchObject({ device_id: barrier.deviceId, outcome: 'opened' });
    expect(opening?.reports.map((report) => [report.object, report.position])).toEqual([
      ['gate', 'open'],
      ['gate', 'closed'],
    ]);

    const python = spawnSync('python3', ['-c', 'import cryptography'], { encoding: 'utf8' });
    if (python.status !== 0) {
      console.warn(
        `the Python verifier is not run: python3 with cryptography is not available (${python.stderr})`,
      );
      return;
    }
    const script = join(tmp, 'verify_receipts.py');
    writeFileSync(script, documentedVerifier());
    const file = join(tmp, `${randomUUID()}.jsonl`);
    writeFileSync(file, answer.html);
    const run = spawnSync('python3', [script, file], { encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toMatch(
      new RegExp(`^${sealed.length} entries intact, head [0-9a-f]{64}\\n$`),
    );
    expect(run.status).toBe(0);
  });
});

/** The verifier as docs/receipts.md prints it, taken from the document itself. */
function documentedVerifier(): string {
  const doc = readFileSync(new URL('../../docs/receipts.md', import.meta.url), 'utf8');
  const after = doc.slice(doc.indexOf('<!-- verify_receipts.py'));
  const match = /```python\n([\s\S]*?)```/.exec(after);
  if (!match) throw new Error('docs/receipts.md has no verifier block');
  return match[1]!;
}
