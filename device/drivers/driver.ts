import type { Ack, AckReason } from '../../shared/protocol/messages.js';
import type { ObjectConfig } from '../config.js';

/** The failure reasons a driver may report (the driver half of ACK_REASONS). */
export const DRIVER_FAILURES = [
  'relay_fault',
  'no_carrier',
  'busy',
  'no_answer',
  'no_network',
  'modem_error',
] as const satisfies readonly AckReason[];
export type DriverFailure = (typeof DRIVER_FAILURES)[number];

/** What a phone's call log showed of the call that opened (phone-call.ts); carried into the signed ack. */
export type CallResult = NonNullable<Ack['call']>;

export type OpenOutcome =
  | { outcome: 'opened'; call?: CallResult }
  | { outcome: 'failed'; reason: DriverFailure; detail?: string };

/** A failure with its reason; a driver may throw it instead of resolving `{ outcome: 'failed' }`. */
export class DriverError extends Error {
  override name = 'DriverError';
  readonly reason: DriverFailure;

  constructor(reason: DriverFailure, message: string = reason) {
    super(message);
    this.reason = reason;
  }
}

/**
 * One kind of output (relay lines, a GSM modem, a phone under Termux, a simulation) serving the objects of that kind.
 *
 * Promises every driver keeps:
 * - `start()` leaves every output in its safe state: relays released, no call in progress. It resolves
 *   even when the hardware is not there yet (a modem that is unplugged is reopened in the background);
 *   it rejects only for a configuration that can never work (no such GPIO chip or line).
 * - `open(object)` performs one opening of one of the driver's objects and resolves `{ outcome: 'opened' }`
 *   only once the action happened (the relay pulsed, the call rang at the GSM module, or a phone placed the
 *   call, which is all Termux shows: docs/design.md section 12.6). Otherwise it resolves
 *   `{ outcome: 'failed', reason }` with a reason from ACK_REASONS, or rejects; a rejection with a DriverError
 *   carries its reason, any other rejection counts as `faultReason`. Whatever happens, when the promise settles
 *   the output is safe again (relay released, call hung up; a phone under Termux cannot hang up, and its call
 *   ends when the module drops it).
 * - At most one `open` per object runs at a time: a second `open` of an object whose opening is in progress
 *   resolves `{ outcome: 'failed', reason: 'busy' }` at once and nothing happens; a driver that cannot serve two
 *   objects at once (one modem, one call) answers the second object the same way. Neither is queued, since a
 *   late opening is worse than a refused one.
 * - `open` is accepted only between `start()` and `stop()`: before or after, it is refused with `faultReason`
 *   (a rejection or a failed outcome) and no output moves.
 * - `stop()` leaves every output safe and releases the hardware, also while an `open` runs; it never rejects.
 *
 * test/device/driver-contract.ts holds these promises as one suite, run against every driver.
 */
export interface Driver {
  readonly kind: ObjectConfig['kind'];
  /** The reason reported for an unexpected exception from `open`. */
  readonly faultReason: DriverFailure;
  start(): Promise<void>;
  open(object: ObjectConfig): Promise<OpenOutcome>;
  stop(): Promise<void>;
  /** GSM signal quality as AT+CSQ reports it (0..31), null when unknown; only drivers with a modem have it. */
  signalQuality?(): number | null;
}

/** Waits `ms` milliseconds; injected so that tests can use fake timers or skip waiting. */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `driver.open` and turns every way it can end into an outcome. */
export async function openSafely(driver: Driver, object: ObjectConfig): Promise<OpenOutcome> {
  try {
    return await driver.open(object);
  } catch (error) {
    if (error instanceof DriverError)
      return { outcome: 'failed', reason: error.reason, detail: error.message };
    return {
      outcome: 'failed',
      reason: driver.faultReason,
      detail: (error as Error)?.message ?? String(error),
    };
  }
}
