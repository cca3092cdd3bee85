import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClockMonitor } from '../../device/runtime/clock.js';
import { PositionReporter } from '../../device/runtime/position-reporter.js';
import {
  type Position,
  type PositionListener,
  PositionListeners,
  type PositionSensor,
} from '../../device/sensors/position-sensor.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  type PositionReport,
  positionReportSchema,
  verifyPositionReport,
} from '../../shared/protocol/positions.js';
import { FakeSensorClock } from './fake-sensor-clock.js';
import { DEVICE_ID, fakeClock, gate, keys } from './fixtures.js';

/** A sensor the test moves by hand. */
class HandSensor implements PositionSensor {
  readonly #listeners = new PositionListeners();
  #position: Position | null;
  constructor(
    readonly object: string,
    initial: Position,
  ) {
    this.#position = initial;
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  current(): Position | null {
    return this.#position;
  }
  onChange(listener: PositionListener): () => void {
    return this.#listeners.add(listener);
  }
  set(position: Position, at: number): void {
    this.#position = position;
    this.#listeners.tell(position, at);
  }
}

describe('position reporter', () => {
  let device: SigningKey;
  let wall: ReturnType<typeof fakeClock>;
  let mono: FakeSensorClock;
  let synced: boolean;
  let clock: ClockMonitor;
  let outbox: PositionReport[];
  let gateSensor: HandSensor;
  let garageSensor: HandSensor;
  let idle: (object: string) => Promise<void>;
  let reporter: PositionReporter;

  /** Both clocks move together, as they do on a controller. */
  const pass = (ms: number) => {
    wall.advance(ms);
    mono.advance(ms);
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(async () => {
    device = keys().device;
    wall = fakeClock();
    mono = new FakeSensorClock();
    synced = true;
    clock = new ClockMonitor({ probe: async () => synced, intervalMs: 60_000, now: wall.now });
    outbox = [];
    gateSensor = new HandSensor('gate', 'closed');
    garageSensor = new HandSensor('garage', 'open');
    idle = async () => undefined;
    reporter = new PositionReporter({
      deviceId: DEVICE_ID,
      deviceKey: device,
      sensors: [gateSensor, garageSensor],
      outbox: { put: async (report) => void outbox.push(report) },
      clock,
      now: wall.now,
      monotonic: () => mono.now(),
      idle: (object) => idle(object),
    });
  });
  afterEach(async () => {
    await reporter.stop();
    await clock.stop();
  });

  it('puts one signed report per change, dated when the gate got there', async () => {
    await clock.check();
    await reporter.start();
    pass(1000);
    const at = wall.now();
    gateSensor.set('open', mono.now());
    pass(200);
    await settle();
    expect(outbox).toHaveLength(1);
    const report = outbox[0]!;
    expect(positionReportSchema.parse(report)).toEqual(report);
    expect(report).toMatchObject({ device_id: DEVICE_ID, object: 'gate', position: 'open', changed_at: at });
    expect(verifyPositionReport(device.publicKey, report)).toBe(true);
    expect(verifyPositionReport(keys().device.publicKey, report)).toBe(false);
    expect(verifyPositionReport(device.publicKey, { ...report, position: 'closed' })).toBe(false);
  });

  it('on each connect reports every current position: the same changed_at, a new id and at', async () => {
    await clock.check();
    const startedAt = wall.now();
    await reporter.start();
    reporter.reportCurrent();
    await settle();
    expect(outbox.map((r) => [r.object, r.position, r.changed_at])).toEqual([
      ['gate', 'closed', startedAt],
      ['garage', 'open', startedAt],
    ]);
    pass(60_000);
    reporter.reportCurrent();
    await settle();
    expect(outbox).toHaveLength(4);
    const [first, , again] = outbox;
    expect(again).toMatchObject({ object: 'gate', position: 'closed', changed_at: first!.changed_at });
    expect(again!.id).not.toBe(first!.id);
    expect(again!.at).toBe(first!.at + 60_000);
    expect(outbox.every((r) => verifyPositionReport(device.publicKey, r))).toBe(true);
  });

  it('holds reports until the clock is trusted, dating changes seen before by the monotonic clock', async () => {
    synced = false;
    await clock.check();
    const startedAt = wall.now();
    await reporter.start();
    reporter.reportCurrent();
    pass(5000);
    gateSensor.set('open', mono.now());
    const openedAt = wall.now();
    pass(30_000);
    await settle();
    expect(outbox).toEqual([]);
    expect(reporter.positions.find((p) => p.object === 'gate')).toEqual({
      object: 'gate',
      position: 'open',
      since: null,
    });

    // The wall clock is stepped by NTP: the time of the change comes from how long ago it was seen.
    wall.advance(3_600_000);
    synced = true;
    await clock.check();
    await settle();
    const changedAt = openedAt + 3_600_000;
    // The change, then the connect's report of every current position.
    expect(outbox.map((r) => [r.object, r.position, r.changed_at])).toEqual([
      ['gate', 'open', changedAt],
      ['gate', 'open', changedAt],
      ['garage', 'open', startedAt + 3_600_000],
    ]);
    expect(reporter.positions.find((p) => p.object === 'gate')?.since).toBe(changedAt);
  });

  it("waits for the acknowledgement of the object's opening in progress", async () => {
    await clock.check();
    await reporter.start();
    const opening = gate();
    idle = (object) => (object === 'gate' ? opening.promise : Promise.resolve());
    gateSensor.set('open', mono.now());
    await settle();
    expect(outbox).toEqual([]);
    opening.open();
    await settle();
    expect(outbox.map((r) => r.position)).toEqual(['open']);
  });

  it('reports nothing after stop', async () => {
    await clock.check();
    await reporter.start();
    await reporter.stop();
    gateSensor.set('open', mono.now());
    reporter.reportCurrent();
    await settle();
    expect(outbox).toEqual([]);
  });
});
