import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ObjectConfig } from '../../device/config.js';
import { DRIVER_FAILURES, type Driver, type OpenOutcome, openSafely } from '../../device/drivers/driver.js';

/**
 * One driver set up on its stand-in hardware, with the probes the contract needs. The contract reads the
 * hardware side (pin levels, the modem's calls, the simulated outputs), never the driver's own account of it.
 */
export interface DriverHarness {
  /** Not started yet. */
  readonly driver: Driver;
  /** Two distinct objects of the driver's kind. */
  readonly objects: readonly [ObjectConfig, ObjectConfig];
  /** Relay lines serve two objects at once; one modem has one call, so it answers the second `busy`. */
  readonly servesObjectsAtOnce: boolean;
  /** Waits until a started driver can open (a modem must be initialised first). */
  ready(): Promise<void>;
  /**
   * True when every output is in its safe state: relays released, no call up. It first lets what the driver
   * already wrote reach the hardware, so that a command sent late (a dial after stop) is seen.
   */
  isSafe(): Promise<boolean>;
  /** How many times the hardware performed an opening of `object`: a pulse, a call that rang. */
  actions(object: ObjectConfig): number;
  /** Makes the hardware spoil the next opening half way. */
  breakNextOpening(): void;
  /** Leaves an output unsafe before `start`, as a crash in the middle of an opening would; optional. */
  leaveUnsafe?(): void;
  dispose(): Promise<void>;
}

export interface DriverContractOptions {
  /** Set when the stand-in hardware is missing here; the suite is then skipped with this reason. */
  skip?: string;
}

/**
 * The promises of device/drivers/driver.ts, written once and run against every driver (as MQTT.js runs
 * one abstract store suite against every store). A driver that passes can be put behind the command handler.
 */
export function driverContract(
  name: string,
  create: () => Promise<DriverHarness>,
  options: DriverContractOptions = {},
): void {
  if (options.skip) console.warn(`${name} driver contract skipped: ${options.skip}`);
  describe.skipIf(options.skip !== undefined)(`driver contract: ${name}`, () => {
    let h: DriverHarness;
    let driver: Driver;
    let first: ObjectConfig;
    let second: ObjectConfig;

    const started = async () => {
      await driver.start();
      await h.ready();
    };

    beforeEach(async () => {
      h = await create();
      driver = h.driver;
      [first, second] = h.objects;
    });
    afterEach(async () => {
      await driver.stop();
      await h.dispose();
    });

    it('start() resolves with every output safe', async () => {
      h.leaveUnsafe?.();
      await expect(driver.start()).resolves.toBeUndefined();
      await h.ready();
      expect(await h.isSafe()).toBe(true);
    });

    it("open() resolves 'opened' only once the action happened, and leaves the output safe", async () => {
      await started();
      const before = h.actions(first);
      const outcome = await driver.open(first);
      // A phone call's result may ride along (docs/design.md section 12.6).
      expect(outcome).toMatchObject({ outcome: 'opened' });
      expect(h.actions(first)).toBe(before + 1);
      expect(await h.isSafe()).toBe(true);
    });

    it('a failed opening names a documented reason, and the output is safe when it settles', async () => {
      await started();
      h.breakNextOpening();
      const outcome = await openSafely(driver, first);
      expect(outcome.outcome).toBe('failed');
      expect(DRIVER_FAILURES).toContain(outcomeReason(outcome));
      expect(await h.isSafe()).toBe(true);
    });

    it('refuses a second open of the same object while one runs, with busy, instead of queueing it', async () => {
      await started();
      const running = driver.open(first);
      const refused = await driver.open(first);
      expect(refused).toMatchObject({ outcome: 'failed', reason: 'busy' });
      expect(await running).toMatchObject({ outcome: 'opened' });
      expect(h.actions(first)).toBe(1);
      expect(await h.isSafe()).toBe(true);
    });

    it('serves a second object at once, or answers it busy when it cannot', async () => {
      await started();
      const running = driver.open(first);
      const other = await driver.open(second);
      expect(await running).toMatchObject({ outcome: 'opened' });
      if (h.servesObjectsAtOnce) {
        expect(other).toMatchObject({ outcome: 'opened' });
        expect(h.actions(second)).toBe(1);
      } else {
        expect(other).toMatchObject({ outcome: 'failed', reason: 'busy' });
        expect(h.actions(second)).toBe(0);
      }
      expect(await h.isSafe()).toBe(true);
    });

    it('refuses an open before start, with its fault reason and without acting', async () => {
      expect(await openSafely(driver, first)).toMatchObject({
        outcome: 'failed',
        reason: driver.faultReason,
      });
      expect(h.actions(first)).toBe(0);
    });

    it('stop() leaves every output safe, even in the middle of an opening, and never rejects', async () => {
      await started();
      const running = openSafely(driver, first);
      await expect(driver.stop()).resolves.toBeUndefined();
      await running;
      expect(await h.isSafe()).toBe(true);
      await expect(driver.stop()).resolves.toBeUndefined();
    });

    it('stop() resolves on a driver that never started', async () => {
      await expect(driver.stop()).resolves.toBeUndefined();
      expect(await h.isSafe()).toBe(true);
    });

    it('accepts no open after stop(): refused with its fault reason, nothing happens', async () => {
      await started();
      await driver.stop();
      expect(await openSafely(driver, first)).toMatchObject({
        outcome: 'failed',
        reason: driver.faultReason,
      });
      expect(h.actions(first)).toBe(0);
      expect(await h.isSafe()).toBe(true);
    });
  });
}

function outcomeReason(outcome: OpenOutcome): string | undefined {
  return outcome.outcome === 'failed' ? outcome.reason : undefined;
}
