import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssembledContext } from '../../cloud/context.js';
import { CommandWaiters } from '../../cloud/links/controllers/command-waiters.js';
import { DeviceMessages } from '../../cloud/links/controllers/device-messages.js';
import { barrierGates, setGateLimits } from '../../cloud/rules/positions/gate-display.js';
import { sweepGates, sweepLeftOpen, sweepNotMoved } from '../../cloud/rules/positions/gate-sweeps.js';
import { ApiError } from '../../shared/errors.js';
import { type Ack, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { type Position, type PositionReport, signPositionReport } from '../../shared/protocol/positions.js';
import { signAck } from '../../shared/protocol/signing.js';
import { type DeviceChannel, deviceTopic } from '../../shared/protocol/topics.js';
import { BrokerEnv, insertOpenEntry, PREFIX } from '../support/broker-env.js';
import { FakeClock } from '../support/clock.js';
import { type DeviceAccount, insertDevice } from '../support/fake-device.js';
import { parseSamples, sampleValue } from '../support/prometheus-text.js';

/**
 * The steps of an opening (docs/design.md section 5.2) as a controller with a position sensor reports them
 * (section 7.5): signed reports on the device's `ack` topic, handled by the cloud's dispatcher exactly as a
 * broker hands them over, on a fake clock; the sweeps are called as their periodic job calls them.
 */

let env: BrokerEnv;
let clock: FakeClock;
let ctx: AssembledContext;
let messages: DeviceMessages;

beforeAll(async () => {
  env = await BrokerEnv.open('embedded');
  clock = new FakeClock(Date.parse('2026-11-27T08:00:00.000Z'));
  ctx = { ...env.context(), clock };
  messages = new DeviceMessages(ctx, new CommandWaiters());
});

afterAll(async () => {
  await env?.close();
});

/** A controller with one gate (`gate`), with or without a position sensor, as the cloud knows it. */
class Gate {
  private constructor(
    readonly account: DeviceAccount,
    readonly objectId: number,
  ) {}

  static async make(options: { sensor: boolean }): Promise<Gate> {
    const account = await insertDevice(env.db);
    // The object's row, as the open flow's tests make it; the state says whether it has a sensor.
    const { objectId } = await insertOpenEntry(env.db, account.id);
    const gate = new Gate(account, objectId);
    await gate.send('state', {
      v: PROTOCOL_VERSION,
      device_id: account.id,
      online: true,
      at: clock.now().getTime(),
      objects: [{ id: 'gate', label: 'Gate', kind: 'relay', ...(options.sensor ? { sensor: true } : {}) }],
    });
    return gate;
  }

  get id(): string {
    return this.account.id;
  }

  /** A message on one of this controller's topics (or another's, with `topicOf`), as the broker hands it over. */
  async send(channel: DeviceChannel, body: unknown, topicOf = this.id): Promise<void> {
    await this.handOver(channel, body, topicOf);
    // A position report is applied after it was taken (docs/design.md section 7.5).
    await messages.idle();
  }

  /** The same, without waiting for what it starts: as a broker hands messages over, one after another. */
  handOver(channel: DeviceChannel, body: unknown, topicOf = this.id): Promise<void> {
    return messages.receive({
      topic: deviceTopic(PREFIX, topicOf, channel),
      payload: Buffer.from(JSON.stringify(body)),
      retain: false,
    });
  }

  /** An opening through this controller, acknowledged "opened" now: its journal entry's id. */
  async open(): Promise<number> {
    return (await this.pulse(1))[0]!;
  }

  /**
   * Openings of `count` companies within one pulse, as the controller answers them (docs/design.md section 7):
   * the first starts the pulse, the others join it and their acknowledgements name it. Their entries' ids.
   */
  async pulse(count: number): Promise<number[]> {
    const entries = [];
    for (let i = 0; i < count; i++) entries.push(await insertOpenEntry(env.db, this.id));
    const now = clock.now().getTime();
    for (const [i, entry] of entries.entries()) {
      const ack: Ack = signAck(this.account.key, {
        v: PROTOCOL_VERSION,
        command_id: entry.commandId,
        device_id: this.id,
        outcome: 'opened',
        received_at: now + i * 50,
        finished_at: now + 200,
        ...(i > 0 ? { pulse: entries[0]!.commandId } : {}),
      });
      await this.send('ack', ack);
    }
    return entries.map((entry) => entry.journalId);
  }

  /** A report signed with this controller's key; `changedAt` defaults to the clock's now. */
  report(position: Position, changedAt = clock.now().getTime(), options: { deviceId?: string } = {}) {
    return signPositionReport(this.account.key, {
      v: PROTOCOL_VERSION,
      type: 'position',
      id: crypto.randomUUID(),
      device_id: options.deviceId ?? this.id,
      object: 'gate',
      position,
      changed_at: changedAt,
      at: clock.now().getTime(),
    });
  }

  async object() {
    return env.db
      .selectFrom('device_objects')
      .select(['has_sensor', 'position', 'position_since', 'left_open_at', 'left_open_entry'])
      .where('id', '=', this.objectId)
      .executeTakeFirstOrThrow();
  }
}

const entryOf = (journalId: number) =>
  env.db
    .selectFrom('journal')
    .select([
      'outcome',
      'acked_at',
      'ack',
      'gate_opened_at',
      'gate_closed_at',
      'gate_not_moved_at',
      'left_open_at',
      'gate_reports',
    ])
    .where('id', '=', journalId)
    .executeTakeFirstOrThrow();

/** The entry's events, in the order they were written. */
async function eventsOf(journalId: number) {
  const rows = await env.db.selectFrom('events').select(['type', 'data', 'seq']).execute();
  return rows
    .filter((row) => (row.data as { journal_id?: number }).journal_id === journalId)
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((row) => ({ type: row.type, data: row.data as Record<string, unknown> }));
}

const typesOf = async (journalId: number) => (await eventsOf(journalId)).map((event) => event.type);

/** How many reports ended with `result` so far, as Prometheus reads it. */
async function reportsCounted(result: string): Promise<number> {
  const samples = parseSamples(await ctx.metrics.text());
  return sampleValue(samples, 'gatelink_position_reports_total', { result }) ?? 0;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('the steps of an opening, seen by a position sensor', () => {
  it('an opening whose gate opens then closes: both steps on the entry, their events in order', async () => {
    const gate = await Gate.make({ sensor: true });
    expect((await gate.object()).has_sensor).toBe(true);
    const relayAt = clock.now().getTime() + 200;
    const journalId = await gate.open();
    clock.advance(2000);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    clock.advance(40_000);
    const closed = gate.report('closed');
    await gate.send('ack', closed);

    const entry = await entryOf(journalId);
    expect(entry.outcome).toBe('opened');
    expect(entry.gate_opened_at?.getTime()).toBe(opened.changed_at);
    expect(entry.gate_closed_at?.getTime()).toBe(closed.changed_at);
    expect(entry.gate_reports).toEqual([opened, closed]);
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_opened', 'open.gate_closed']);
    const [, openedEvent, closedEvent] = await eventsOf(journalId);
    expect(openedEvent!.data).toMatchObject({
      journal_id: journalId,
      key_ref: expect.any(Number),
      number_id: gate.objectId,
      actor: 'driver 7',
      relay_at: iso(relayAt),
      opened_at: iso(opened.changed_at),
    });
    expect(closedEvent!.data).toMatchObject({
      journal_id: journalId,
      relay_at: iso(relayAt),
      opened_at: iso(opened.changed_at),
      closed_at: iso(closed.changed_at),
      open_for_s: 40,
    });
    const object = await gate.object();
    expect(object.position).toBe('closed');
    expect(object.position_since?.getTime()).toBe(closed.changed_at);

    // Long after, the sweeps find nothing to say of it.
    clock.advance(3_600_000);
    await sweepGates(ctx);
    expect(await typesOf(journalId)).toHaveLength(3);
    expect((await entryOf(journalId)).gate_not_moved_at).toBeNull();
  });

  it('openings of one pulse: every step on each entry, and each company told of its own', async () => {
    const gate = await Gate.make({ sensor: true });
    const journalIds = await gate.pulse(3);
    const [, second] = journalIds;
    expect(((await entryOf(second!)).ack as Ack).pulse).toBeDefined();
    clock.advance(1800);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    clock.advance(30_000);
    const closed = gate.report('closed');
    await gate.send('ack', closed);
    for (const journalId of journalIds) {
      const entry = await entryOf(journalId);
      expect(entry.gate_opened_at?.getTime()).toBe(opened.changed_at);
      expect(entry.gate_closed_at?.getTime()).toBe(closed.changed_at);
      expect(entry.gate_reports).toEqual([opened, closed]);
      expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_opened', 'open.gate_closed']);
    }
    // None of them is said to have left the gate unmoved.
    clock.advance(3_600_000);
    await sweepGates(ctx);
    for (const journalId of journalIds) expect((await entryOf(journalId)).gate_not_moved_at).toBeNull();
  });

  it('an opening after a pulse is not one of it', async () => {
    const gate = await Gate.make({ sensor: true });
    const [first] = await gate.pulse(1);
    clock.advance(1000);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    clock.advance(5000);
    const [later] = await gate.pulse(1);
    clock.advance(1000);
    await gate.send('ack', gate.report('closed'));
    expect((await entryOf(first!)).gate_closed_at).not.toBeNull();
    // The later opening's command came after the gate was seen open: the open step is not its.
    expect((await entryOf(later!)).gate_opened_at).toBeNull();
  });

  it('keeps the controller’s signed acknowledgement on the entry', async () => {
    const gate = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    const ack = (await entryOf(journalId)).ack as Ack;
    expect(ack.device_id).toBe(gate.id);
    expect(ack.outcome).toBe('opened');
    expect(ack.sig).toMatch(/^[A-Za-z0-9+/]{86}==$/);
  });

  it('an opening whose gate never moves: "gate did not move" once the barrier’s move timeout passed, told once', async () => {
    const gate = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    const relayAt = clock.now().getTime() + 200;
    clock.advance(10_000);
    await sweepNotMoved(ctx);
    expect((await entryOf(journalId)).gate_not_moved_at).toBeNull();
    clock.advance(25_000);
    const [first, second, third] = await Promise.all([
      sweepNotMoved(ctx),
      sweepNotMoved(ctx),
      sweepGates(ctx),
    ]);
    expect(first + second + third.notMoved).toBeGreaterThanOrEqual(1);
    expect((await entryOf(journalId)).gate_not_moved_at?.getTime()).toBe(clock.now().getTime());
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_not_moved']);
    expect((await eventsOf(journalId))[1]!.data).toMatchObject({
      journal_id: journalId,
      relay_at: iso(relayAt),
      not_moved_at: clock.now().toISOString(),
      limit_s: 30,
    });

    // A late "open" does not rewrite what the entry says.
    await gate.send('ack', gate.report('open', relayAt + 5000));
    expect((await entryOf(journalId)).gate_opened_at).toBeNull();
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_not_moved']);
  });

  it('an opening of a gate already open is not marked "gate did not move": there was no movement to see', async () => {
    const gate = await Gate.make({ sensor: true });
    await gate.send('ack', gate.report('open'));
    clock.advance(1000);
    const journalId = await gate.open();
    clock.advance(31_000);
    await sweepNotMoved(ctx);
    expect((await entryOf(journalId)).gate_not_moved_at).toBeNull();
    expect(await typesOf(journalId)).toEqual(['open.succeeded']);
  });

  it('a gate left open past the limit: gate.left_open once, then gate.closed when it closes', async () => {
    const gate = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    clock.advance(1500);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    clock.advance(599_000);
    await sweepLeftOpen(ctx);
    expect((await gate.object()).left_open_at).toBeNull();
    clock.advance(2000);
    await Promise.all([sweepLeftOpen(ctx), sweepGates(ctx)]);
    const leftOpenAt = clock.now().getTime();
    expect((await gate.object()).left_open_at?.getTime()).toBe(leftOpenAt);
    expect((await entryOf(journalId)).left_open_at?.getTime()).toBe(leftOpenAt);
    clock.advance(60_000);
    await sweepGates(ctx);
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_opened', 'gate.left_open']);
    expect((await eventsOf(journalId))[2]!.data).toMatchObject({
      journal_id: journalId,
      opened_at: iso(opened.changed_at),
      left_open_at: iso(leftOpenAt),
      limit_s: 600,
    });

    const closed = gate.report('closed');
    await gate.send('ack', closed);
    expect(await typesOf(journalId)).toEqual([
      'open.succeeded',
      'open.gate_opened',
      'gate.left_open',
      'open.gate_closed',
      'gate.closed',
    ]);
    expect((await eventsOf(journalId))[4]!.data).toMatchObject({
      opened_at: iso(opened.changed_at),
      left_open_at: iso(leftOpenAt),
      closed_at: iso(closed.changed_at),
      open_for_s: 661,
    });
    const object = await gate.object();
    expect(object.left_open_at).toBeNull();
    expect(object.left_open_entry).toBeNull();
  });

  it('a gate opened by other means and left open is marked for the customer, with no company to tell', async () => {
    const gate = await Gate.make({ sensor: true });
    await gate.send('ack', gate.report('open'));
    clock.advance(601_000);
    await sweepLeftOpen(ctx);
    const object = await gate.object();
    expect(object.left_open_at?.getTime()).toBe(clock.now().getTime());
    expect(object.left_open_entry).toBeNull();
    await gate.send('ack', gate.report('closed'));
    expect((await gate.object()).left_open_at).toBeNull();
  });

  it('a repeated report changes nothing, and one with a time too far ahead is dropped without blocking later ones', async () => {
    const gate = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    clock.advance(1000);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    const repeats = await reportsCounted('repeat');
    // What the controller sends on every connect: the same change, a new report.
    clock.advance(5000);
    await gate.send('ack', gate.report('open', opened.changed_at));
    expect(await reportsCounted('repeat')).toBe(repeats + 1);
    expect((await entryOf(journalId)).gate_reports).toEqual([opened]);
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_opened']);

    const future = await reportsCounted('future');
    await gate.send('ack', gate.report('closed', clock.now().getTime() + 6 * 60_000));
    expect(await reportsCounted('future')).toBe(future + 1);
    expect((await gate.object()).position).toBe('open');
    const closed = gate.report('closed');
    await gate.send('ack', closed);
    expect((await gate.object()).position).toBe('closed');
    expect((await entryOf(journalId)).gate_closed_at?.getTime()).toBe(closed.changed_at);
  });

  it('reports arriving together are applied in one go, each as alone and in the order received', async () => {
    const [first, second] = [await Gate.make({ sensor: true }), await Gate.make({ sensor: true })];
    const [firstEntry, secondEntry] = [await first.open(), await second.open()];
    clock.advance(1500);
    const firstOpen = first.report('open');
    const secondOpen = second.report('open');
    clock.advance(8000);
    const firstClosed = first.report('closed');
    const stale = second.report('closed', secondOpen.changed_at - 1);
    const forged: PositionReport = {
      ...second.report('closed'),
      sig: Buffer.alloc(64, 9).toString('base64'),
    };
    const counted = {
      applied: await reportsCounted('applied'),
      stale: await reportsCounted('stale'),
      bad_signature: await reportsCounted('bad_signature'),
    };
    // As a broker hands them over: none waits for the one before it to be applied.
    for (const [gate, report] of [
      [first, firstOpen],
      [second, secondOpen],
      [first, firstClosed],
      [second, stale],
      [second, forged],
    ] as const) {
      await gate.handOver('ack', report);
    }
    await messages.idle();

    expect(await reportsCounted('applied')).toBe(counted.applied + 3);
    expect(await reportsCounted('stale')).toBe(counted.stale + 1);
    expect(await reportsCounted('bad_signature')).toBe(counted.bad_signature + 1);
    const firstSteps = await entryOf(firstEntry);
    expect(firstSteps.gate_opened_at?.getTime()).toBe(firstOpen.changed_at);
    expect(firstSteps.gate_closed_at?.getTime()).toBe(firstClosed.changed_at);
    expect(firstSteps.gate_reports).toEqual([firstOpen, firstClosed]);
    expect(await typesOf(firstEntry)).toEqual(['open.succeeded', 'open.gate_opened', 'open.gate_closed']);
    expect((await eventsOf(firstEntry))[2]!.data).toMatchObject({ open_for_s: 8 });
    expect((await entryOf(secondEntry)).gate_closed_at).toBeNull();
    expect(await typesOf(secondEntry)).toEqual(['open.succeeded', 'open.gate_opened']);
    expect((await first.object()).position).toBe('closed');
    expect((await second.object()).position).toBe('open');
  });

  it("one gate's reports of a moment, applied together, leave it as one by one would", async () => {
    const gate = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    clock.advance(1500);
    const opened = gate.report('open');
    await gate.send('ack', opened);
    clock.advance(601_000);
    await sweepLeftOpen(ctx);
    expect((await gate.object()).left_open_entry).toBe(journalId);
    const counted = {
      applied: await reportsCounted('applied'),
      repeat: await reportsCounted('repeat'),
      stale: await reportsCounted('stale'),
    };
    // Closed, opened again by other means, the same change reported again on a connect with a later time, and
    // a replayed old one: four reports of one object in one statement.
    clock.advance(1000);
    const closed = gate.report('closed');
    clock.advance(1000);
    const reopened = gate.report('open');
    clock.advance(1000);
    const repeated = gate.report('open', reopened.changed_at + 500);
    const replayed = gate.report('closed', closed.changed_at - 1);
    for (const report of [closed, reopened, repeated, replayed]) await gate.handOver('ack', report);
    await messages.idle();

    expect(await reportsCounted('applied')).toBe(counted.applied + 2);
    expect(await reportsCounted('repeat')).toBe(counted.repeat + 1);
    expect(await reportsCounted('stale')).toBe(counted.stale + 1);
    const object = await gate.object();
    expect(object.position).toBe('open');
    // The repeat moved only the mark: the gate has stood open since the change the cloud saw.
    expect(object.position_since?.getTime()).toBe(reopened.changed_at);
    expect(object.left_open_at).toBeNull();
    expect(object.left_open_entry).toBeNull();
    const { position_report } = await env.db
      .selectFrom('device_objects')
      .select('position_report')
      .where('id', '=', gate.objectId)
      .executeTakeFirstOrThrow();
    expect(position_report).toEqual(repeated);
    const steps = await entryOf(journalId);
    expect(steps.gate_closed_at?.getTime()).toBe(closed.changed_at);
    expect(steps.gate_reports).toEqual([opened, closed]);
    expect(await typesOf(journalId)).toEqual([
      'open.succeeded',
      'open.gate_opened',
      'gate.left_open',
      'open.gate_closed',
      'gate.closed',
    ]);
    expect((await eventsOf(journalId))[4]!.data).toMatchObject({
      closed_at: iso(closed.changed_at),
      open_for_s: 602,
    });
  });

  it('reports in one message are each applied as if they had come alone; a message naming another device is not', async () => {
    const gate = await Gate.make({ sensor: true });
    const other = await Gate.make({ sensor: true });
    const journalId = await gate.open();
    clock.advance(1200);
    const opened = gate.report('open');
    clock.advance(30_000);
    const closed = gate.report('closed');
    const forged: PositionReport = { ...gate.report('open'), sig: Buffer.alloc(64, 3).toString('base64') };
    const counted = {
      malformed: await reportsCounted('malformed'),
      foreign: await reportsCounted('foreign'),
    };
    const bundle = (deviceId: string, reports: unknown[]) => ({
      v: PROTOCOL_VERSION,
      type: 'positions',
      device_id: deviceId,
      reports,
    });

    await gate.send('ack', bundle(other.id, [opened]));
    await gate.send(
      'ack',
      bundle(
        gate.id,
        Array.from({ length: 33 }, () => opened),
      ),
    );
    expect(await reportsCounted('foreign')).toBe(counted.foreign + 1);
    expect(await reportsCounted('malformed')).toBe(counted.malformed + 1);
    expect((await gate.object()).position).toBeNull();

    await gate.send('ack', bundle(gate.id, [opened, { ...closed, position: 'ajar' }, closed, forged]));
    expect(await reportsCounted('malformed')).toBe(counted.malformed + 2);
    const entry = await entryOf(journalId);
    expect(entry.gate_reports).toEqual([opened, closed]);
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_opened', 'open.gate_closed']);
    expect((await gate.object()).position).toBe('closed');
  });

  it('a controller without sensors is as before: no position, and never "gate did not move"', async () => {
    const gate = await Gate.make({ sensor: false });
    expect((await gate.object()).has_sensor).toBe(false);
    const journalId = await gate.open();
    clock.advance(120_000);
    await sweepGates(ctx);
    const entry = await entryOf(journalId);
    expect(entry.gate_not_moved_at).toBeNull();
    expect(entry.gate_opened_at).toBeNull();
    expect(await typesOf(journalId)).toEqual(['open.succeeded']);
    expect((await gate.object()).position).toBeNull();
  });

  it('drops a report for an object the controller does not have', async () => {
    const gate = await Gate.make({ sensor: true });
    const unknown = await reportsCounted('unknown_object');
    const report = signPositionReport(gate.account.key, { ...gate.report('open'), object: 'side' });
    await gate.send('ack', report);
    expect(await reportsCounted('unknown_object')).toBe(unknown + 1);
  });

  it('drops a report that is not one, counting it as malformed', async () => {
    const gate = await Gate.make({ sensor: true });
    const malformed = await reportsCounted('malformed');
    const { sig: _sig, ...unsigned } = gate.report('open');
    await gate.send('ack', unsigned);
    await gate.send('ack', { ...gate.report('open'), position: 'ajar' });
    expect(await reportsCounted('malformed')).toBe(malformed + 2);
    expect((await gate.object()).position).toBeNull();
  });

  it('an entry completed by the previous release (complete_entry, no ack kept) still gets its steps', async () => {
    const gate = await Gate.make({ sensor: true });
    const entry = await insertOpenEntry(env.db, gate.id);
    const ackedAt = clock.now();
    const { rows } = await sql<{ id: number | null }>`
      select complete_entry(null, ${entry.commandId}::uuid, ${gate.id}::text, 'opened', null, 'late',
        ${ackedAt}::timestamptz, ${clock.now()}::timestamptz, ${crypto.randomUUID()}::uuid) as id`.execute(
      env.db,
    );
    expect(rows[0]!.id).toBe(entry.journalId);
    expect((await entryOf(entry.journalId)).ack).toBeNull();
    clock.advance(1000);
    await gate.send('ack', gate.report('open'));
    expect((await entryOf(entry.journalId)).gate_opened_at?.getTime()).toBe(clock.now().getTime());
  });

  it('an acknowledgement as the previous protocol sends it completes its entry as before', async () => {
    const gate = await Gate.make({ sensor: false });
    const journalId = await gate.open();
    const entry = await entryOf(journalId);
    expect(entry.outcome).toBe('opened');
    expect(entry.acked_at?.getTime()).toBe(clock.now().getTime() + 200);
    expect(await typesOf(journalId)).toEqual(['open.succeeded']);
  });
});

describe('reports that must change nothing', () => {
  /** What a report could have changed: the object, and every entry of the barrier. */
  async function snapshot(gate: Gate) {
    const entries = await env.db
      .selectFrom('journal')
      .select(['id', 'gate_opened_at', 'gate_closed_at', 'gate_reports'])
      .where('device_id', '=', gate.id)
      .orderBy('id')
      .execute();
    return { object: await gate.object(), entries };
  }

  it("[attack:mqtt.position-other-device] a report for another controller's gate is dropped", async () => {
    const victim = await Gate.make({ sensor: true });
    const intruder = await Gate.make({ sensor: true });
    await victim.open();
    const before = await snapshot(victim);
    const foreign = await reportsCounted('foreign');
    const badSignature = await reportsCounted('bad_signature');
    // Naming the victim on the intruder's own topic (the only one its broker account may publish on).
    await intruder.send('ack', intruder.report('open', undefined, { deviceId: victim.id }));
    // Had it reached the victim's topic: signed with the intruder's key, it does not verify under the victim's.
    await intruder.send('ack', intruder.report('open', undefined, { deviceId: victim.id }), victim.id);
    expect(await reportsCounted('foreign')).toBe(foreign + 1);
    expect(await reportsCounted('bad_signature')).toBe(badSignature + 1);
    expect(await snapshot(victim)).toEqual(before);
  });

  it('[attack:mqtt.forged-position] a report whose signature does not verify is dropped', async () => {
    const gate = await Gate.make({ sensor: true });
    await gate.open();
    await gate.send('ack', gate.report('closed'));
    const before = await snapshot(gate);
    const badSignature = await reportsCounted('bad_signature');
    clock.advance(1000);
    const altered: PositionReport = { ...gate.report('closed'), position: 'open' };
    const madeUp: PositionReport = { ...gate.report('open'), sig: Buffer.alloc(64, 7).toString('base64') };
    await gate.send('ack', altered);
    await gate.send('ack', madeUp);
    expect(await reportsCounted('bad_signature')).toBe(badSignature + 2);
    expect(await snapshot(gate)).toEqual(before);
  });

  it('[attack:mqtt.replayed-position] an old report sent again neither moves the gate back nor attaches to a new opening', async () => {
    const gate = await Gate.make({ sensor: true });
    await gate.open();
    clock.advance(1000);
    const oldOpen = gate.report('open');
    await gate.send('ack', oldOpen);
    clock.advance(10_000);
    await gate.send('ack', gate.report('closed'));

    const second = await gate.open();
    const stale = await reportsCounted('stale');
    clock.advance(1000);
    await gate.send('ack', oldOpen);
    expect(await reportsCounted('stale')).toBe(stale + 1);
    expect((await gate.object()).position).toBe('closed');
    expect((await entryOf(second)).gate_opened_at).toBeNull();
    clock.advance(60_000);
    await sweepNotMoved(ctx);
    expect(await typesOf(second)).toEqual(['open.succeeded', 'open.gate_not_moved']);
  });
});

describe('a barrier’s limits and positions, for its customer', () => {
  async function owned(gate: Gate): Promise<number> {
    const customer = await env.db
      .insertInto('customers')
      .values({ display_name: 'Owner' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await env.db.updateTable('devices').set({ customer_id: customer.id }).where('id', '=', gate.id).execute();
    return customer.id;
  }

  it('reads and sets the limits, refusing values out of bounds and another customer', async () => {
    const gate = await Gate.make({ sensor: true });
    const customerId = await owned(gate);
    const limits = (customer: number) => barrierGates(ctx.db, customer, gate.id).then((g) => g.limits);
    const set = (customer: number, leftOpenLimitS: number, moveTimeoutS: number) =>
      setGateLimits(ctx.db, {
        customerId: customer,
        deviceId: gate.id,
        limits: { leftOpenLimitS, moveTimeoutS },
      });
    expect(await limits(customerId)).toEqual({ leftOpenLimitS: 600, moveTimeoutS: 30 });
    await set(customerId, 120, 10);
    await expect(set(customerId, 30, 10)).rejects.toMatchObject({
      code: 'invalid_field',
      field: 'left_open_minutes',
    });
    await expect(set(customerId, 120, 601)).rejects.toBeInstanceOf(ApiError);
    await expect(set(customerId + 1000, 300, 10)).rejects.toMatchObject({ code: 'not_found' });
    await expect(limits(customerId + 1000)).rejects.toMatchObject({ code: 'not_found' });
    expect(await limits(customerId)).toEqual({ leftOpenLimitS: 120, moveTimeoutS: 10 });

    // The sweeps follow the limits set.
    const journalId = await gate.open();
    clock.advance(11_000);
    await sweepNotMoved(ctx);
    expect(await typesOf(journalId)).toEqual(['open.succeeded', 'open.gate_not_moved']);
  });

  it('gives each object’s position and since when', async () => {
    const gate = await Gate.make({ sensor: true });
    const customerId = await owned(gate);
    const report = gate.report('open');
    await gate.send('ack', report);
    expect((await barrierGates(ctx.db, customerId, gate.id)).objects).toEqual([
      {
        numberId: gate.objectId,
        label: 'Gate',
        position: 'open',
        since: new Date(report.changed_at),
        leftOpenAt: null,
      },
    ]);
    await expect(barrierGates(ctx.db, customerId + 1000, gate.id)).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
