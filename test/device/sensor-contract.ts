import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Position, PositionSensor } from '../../device/sensors/position-sensor.js';
import type { FakeSensorClock } from './fake-sensor-clock.js';

/**
 * One sensor set up on its stand-in hardware. The contract moves the gate through the hardware side (pin
 * levels, the simulated output's pulses) and reads the sensor only through its interface.
 */
export interface SensorHarness {
  /** Not started yet. */
  readonly sensor: PositionSensor;
  readonly clock: FakeSensorClock;
  /** Where the gate is when the sensor starts. */
  readonly initial: Position;
  /** How long after `move` the new position has settled, on `clock`. */
  readonly settleMs: number;
  /** Makes the hardware take the gate to the other position (the sensor sees it once `settleMs` passed). */
  move(): Promise<void>;
  /** A contact that bounces: it leaves its level and comes back within the debounce time. */
  bounce?(): void;
  /** True when the sensor holds nothing of the hardware any more (the line unexported, nothing watched). */
  released(): boolean;
  dispose(): Promise<void>;
}

/**
 * The promises of device/sensors/position-sensor.ts, written once and run against every sensor (as
 * test/device/driver-contract.ts does for drivers).
 */
export function sensorContract(
  name: string,
  create: () => Promise<SensorHarness>,
  options: {
    /** False for a sensor without contacts that could bounce (the simulated one): `bounce` is then unused. */
    contacts: boolean;
  },
): void {
  describe(`sensor contract: ${name}`, () => {
    let h: SensorHarness;
    let changes: { position: Position; at: number }[];

    beforeEach(async () => {
      h = await create();
      changes = [];
      h.sensor.onChange((position, at) => changes.push({ position, at }));
    });
    afterEach(async () => {
      await h.sensor.stop();
      await h.dispose();
    });

    const other = () => (h.initial === 'open' ? 'closed' : 'open');

    it('start() reads the position the gate is in, and reports no change for it', async () => {
      expect(h.sensor.current()).toBeNull();
      await h.sensor.start();
      expect(h.sensor.current()).toBe(h.initial);
      h.clock.advance(h.settleMs * 2);
      expect(changes).toEqual([]);
    });

    it('reports a change once, after it settled, dated when the gate got there', async () => {
      await h.sensor.start();
      const movedAt = h.clock.now();
      await h.move();
      h.clock.advance(h.settleMs);
      expect(changes.map((change) => change.position)).toEqual([other()]);
      expect(changes[0]!.at).toBeGreaterThanOrEqual(movedAt);
      expect(changes[0]!.at).toBeLessThanOrEqual(h.clock.now());
      expect(h.sensor.current()).toBe(other());
      h.clock.advance(h.settleMs * 2);
      expect(changes).toHaveLength(1);
    });

    it.skipIf(!options.contacts)('ignores a contact bouncing within the debounce time', async () => {
      await h.sensor.start();
      h.bounce!();
      h.clock.advance(h.settleMs * 2);
      expect(changes).toEqual([]);
      expect(h.sensor.current()).toBe(h.initial);
    });

    it('stop() releases the input, and no change is reported after it', async () => {
      await h.sensor.start();
      await h.sensor.stop();
      expect(h.released()).toBe(true);
      expect(h.sensor.current()).toBeNull();
      await h.move();
      h.clock.advance(h.settleMs * 2);
      expect(changes).toEqual([]);
    });

    it('stop() during a change in progress reports nothing of it', async () => {
      await h.sensor.start();
      await h.move();
      await h.sensor.stop();
      h.clock.advance(h.settleMs * 2);
      expect(changes).toEqual([]);
      expect(h.released()).toBe(true);
    });
  });
}
