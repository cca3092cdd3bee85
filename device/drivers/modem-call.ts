import type { GsmObjectConfig } from '../config.js';
import type { AtChannel } from './at-channel.js';
import { DriverError, type OpenOutcome } from './driver.js';
import { CLCC_ACTIVE, CLCC_ALERTING, failure, parseCalls } from './modem-responses.js';

export interface OutgoingCallOptions {
  now: () => number;
  commandTimeoutMs: number;
  /** How often the calls in progress are asked for (AT+CLCC) while nothing else happens. */
  pollMs: number;
  /** Whether the modem is still the one the call was dialled on (not closed or reopening meanwhile). */
  ready: () => boolean;
}

/**
 * One call to a phone-call barrier (modem-gsm.ts, "Opening"): `ATD<number>;`, then AT+CLCC polling until the
 * call is alerting or active, which is `opened`; it rings for `ring_hold_ms` unless the module drops it first.
 * A final result code the modem sends on its own (BUSY, NO CARRIER, NO ANSWER, NO DIALTONE) ends it: a failure
 * before it rang, the module's way of dropping it after. The caller hangs up whatever the outcome.
 */
export class OutgoingCall {
  readonly #at: AtChannel;
  readonly #config: GsmObjectConfig;
  readonly #options: OutgoingCallOptions;
  readonly #events: string[] = [];
  #wake: (() => void) | null = null;

  constructor(at: AtChannel, config: GsmObjectConfig, options: OutgoingCallOptions) {
    this.#at = at;
    this.#config = config;
    this.#options = options;
  }

  /** The modem said on its own how the call ended. */
  ended(code: string): void {
    this.#events.push(code);
    this.#wake?.();
  }

  /** Stops waiting at once (the driver is stopping); the next check sees the modem no longer ready. */
  cancel(): void {
    this.#wake?.();
  }

  async run(): Promise<OpenOutcome> {
    const { now, commandTimeoutMs: timeoutMs } = this.#options;
    const config = this.#config;
    const started = now();
    const dial = await this.#at.command(`ATD${config.number};`, { timeoutMs, callResults: true });
    if (dial.final !== 'OK') return failure(dial.final);

    let rangAt: number | null = null;
    let seen = false;
    for (;;) {
      const event = this.#events.shift();
      if (event !== undefined) return rangAt !== null ? { outcome: 'opened' } : failure(event);
      const calls = parseCalls((await this.#at.command('AT+CLCC', { timeoutMs })).lines);
      const call = calls.find((line) => line.outgoing);
      if (call) seen = true;
      if (call && (call.stat === CLCC_ALERTING || call.stat === CLCC_ACTIVE)) rangAt ??= now();
      if (!call && seen && this.#events.length === 0) {
        // The call is gone: dropped by the module after ringing, or ended before it rang.
        if (rangAt !== null) return { outcome: 'opened' };
        return { outcome: 'failed', reason: 'no_carrier', detail: 'the call ended before it rang' };
      }
      if (rangAt !== null && now() - rangAt >= config.ring_hold_ms) return { outcome: 'opened' };
      if (rangAt === null && now() - started >= config.ring_timeout_ms) {
        return {
          outcome: 'failed',
          reason: 'no_answer',
          detail: `it did not ring within ${config.ring_timeout_ms} ms`,
        };
      }
      if (!this.#options.ready()) throw new DriverError('modem_error', 'the modem went away during the call');
      await this.#waitForEvent(this.#options.pollMs);
    }
  }

  #waitForEvent(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
