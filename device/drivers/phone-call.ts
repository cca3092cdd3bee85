import type { ObjectConfig, PhoneObjectConfig } from '../config.js';
import { CALL_LOG_LIMIT, callLogSchema, callResultOf, entryKey, newCallTo } from '../phone/call-log.js';
import { cannotCall, telephonyInfoSchema } from '../phone/telephony-info.js';
import { permissionLacking, readTermuxJson } from '../phone/termux-answer.js';
import { runTermux, type TermuxResult } from '../phone/termux-command.js';
import {
  type CallResult,
  type Driver,
  DriverError,
  type OpenOutcome,
  realSleep,
  type Sleep,
} from './driver.js';

export interface PhoneCallDriverOptions {
  objects: readonly PhoneObjectConfig[];
  /** Every wait (between readings of the call log) goes through it, so tests need no real seconds. */
  sleep?: Sleep;
  now?: () => number;
  /** The environment the commands run in, whose PATH finds them; the process's own by default. */
  env?: Readonly<Record<string, string | undefined>>;
  log?: (line: string) => void;
}

const BUSY: OpenOutcome = { outcome: 'failed', reason: 'busy', detail: 'the phone is in another call' };

/**
 * Phone-call barriers dialled from the controller's own phone: the controller runs on an Android phone under
 * Termux and calls the gate's GSM module from the phone's SIM through Termux:API (docs/design.md section 12.6).
 *
 * An opening, in order:
 * 1. `termux-telephony-deviceinfo`: no SIM, a locked SIM, or no network operator (airplane mode, no coverage)
 *    is `no_network`, before anything is dialled. Unreadable (READ_PHONE_STATE not granted), it is skipped.
 * 2. `termux-call-log -l 5`, to tell our call from those before it.
 * 3. `termux-telephony-call <number>`: Termux:API starts Android's ACTION_CALL and prints nothing. `opened`
 *    from here on: the call is placed, and a ring-and-open module opens on the ring.
 * 4. `termux-call-log` every `poll_ms` until our call shows (Android logs a call once it has ended), at most
 *    `call_timeout_ms`: connected for any time is `call: 'answered'`, for none `call: 'unanswered'` (rejected,
 *    busy or rung out alike: the log has no more to say); not shown in time, or no log to read, `'placed'`.
 *
 * Termux results and the reasons they map to (ACK_REASONS, shared/protocol/messages.ts):
 * - a command not on PATH (the termux-api package missing): `modem_error`;
 * - a command without answer within `command_timeout_ms` (the Termux:API app missing, or not starting):
 *   `modem_error`;
 * - `{"error": "Please grant ... android.permission.CALL_PHONE"}` from the call: `modem_error`, naming the
 *   permission (Termux:API opens the prompt on the phone's screen);
 * - SIM absent, pin_required, puk_required or network_locked, or an empty network operator: `no_network`;
 * - a second opening while a call runs: `busy` (the phone has one line).
 *
 * What it cannot do: hang up. Termux:API has no command that ends a call, so the call lasts until the module
 * drops it, which ring-and-open modules do, or the network gives up; `stop()` ends our waiting, not the call.
 * Every command runs by name from PATH, with execFile and no shell (device/phone/termux-command.ts): Termux's
 * Node.js is a bionic build, and nothing here assumes a glibc system's paths or programs.
 */
export class PhoneCallDriver implements Driver {
  readonly kind = 'phone';
  readonly faultReason = 'modem_error';
  readonly #objects: Map<string, PhoneObjectConfig>;
  readonly #sleep: Sleep;
  readonly #now: () => number;
  readonly #env: Readonly<Record<string, string | undefined>> | undefined;
  readonly #log: (line: string) => void;
  #running = false;
  /** Resolves when the driver stops, to cut any wait short. */
  #stopped: Promise<void> = Promise.resolve();
  #stop: () => void = () => undefined;
  /** The opening in progress: one at a time, since the phone has one line. */
  #opening: Promise<OpenOutcome> | null = null;

  constructor(options: PhoneCallDriverOptions) {
    this.#objects = new Map(options.objects.map((object) => [object.id, object]));
    this.#sleep = options.sleep ?? realSleep;
    this.#now = options.now ?? Date.now;
    this.#env = options.env;
    this.#log = options.log ?? (() => undefined);
  }

  /** Nothing to release: a phone with no call of ours is safe. Missing pieces are the readiness checks' part. */
  async start(): Promise<void> {
    this.#stopped = new Promise((resolve) => {
      this.#stop = resolve;
    });
    this.#running = true;
  }

  /** Ends the waiting and lets the opening in progress settle; the call itself cannot be ended from Termux. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stop();
    await this.#opening?.catch(() => undefined);
  }

  async open(object: ObjectConfig): Promise<OpenOutcome> {
    const config = this.#objects.get(object.id);
    if (!config || !this.#running)
      throw new DriverError('modem_error', `no phone object ${object.id} running`);
    if (this.#opening) return BUSY;
    const opening = this.#call(config);
    this.#opening = opening;
    try {
      return await opening;
    } finally {
      this.#opening = null;
    }
  }

  async #call(config: PhoneObjectConfig): Promise<OpenOutcome> {
    const unfit = await this.#cannotCall(config);
    if (unfit) return unfit;
    const before = await this.#readLog(config);
    if (!this.#running) return stoppedBeforeDialling;
    const dialled = await this.#dial(config);
    if (dialled) return dialled;
    if (before === null) return { outcome: 'opened', call: 'placed' };
    return { outcome: 'opened', call: await this.#callEnd(config, before) };
  }

  /** Step 1: a failure when Android says the phone cannot call now; null to go on (also when it cannot tell). */
  async #cannotCall(config: PhoneObjectConfig): Promise<OpenOutcome | null> {
    const result = await this.#run(config, 'termux-telephony-deviceinfo', []);
    if (result.kind !== 'done') return termuxFailure('termux-telephony-deviceinfo', result, config);
    const answer = readTermuxJson(result.stdout, telephonyInfoSchema);
    if (answer.kind !== 'value') return null;
    const why = cannotCall(answer.value);
    return why === null ? null : { outcome: 'failed', reason: 'no_network', detail: why };
  }

  /** Step 3: null once the call is placed, else the failure. */
  async #dial(config: PhoneObjectConfig): Promise<OpenOutcome | null> {
    const result = await this.#run(config, 'termux-telephony-call', [config.number]);
    if (result.kind !== 'done') return termuxFailure('termux-telephony-call', result, config);
    const permission = permissionLacking(result.stdout);
    if (permission === null) return null;
    return {
      outcome: 'failed',
      reason: 'modem_error',
      detail: `Termux:API lacks ${permission}: grant it on the phone (Settings, Apps, Termux:API, Permissions)`,
    };
  }

  /** Step 4: how the call ended, as far as the call log shows it within `call_timeout_ms`. */
  async #callEnd(config: PhoneObjectConfig, before: ReadonlySet<string>): Promise<CallResult> {
    const deadline = this.#now() + config.call_timeout_ms;
    while (this.#running && this.#now() < deadline) {
      await this.#wait(config.poll_ms);
      const entries = await this.#readEntries(config);
      const ours = entries && newCallTo(config.number, before, entries);
      if (ours) return callResultOf(ours);
    }
    if (this.#running)
      this.#log(
        `phone: the call to ${config.id} did not show in the call log within ${config.call_timeout_ms} ms`,
      );
    return 'placed';
  }

  /** The keys of the newest calls, or null when the log cannot be read (READ_CALL_LOG not granted, ...). */
  async #readLog(config: PhoneObjectConfig): Promise<Set<string> | null> {
    const entries = await this.#readEntries(config);
    return entries === null ? null : new Set(entries.map(entryKey));
  }

  async #readEntries(config: PhoneObjectConfig) {
    const result = await this.#run(config, 'termux-call-log', ['-l', String(CALL_LOG_LIMIT)]);
    if (result.kind !== 'done') return null;
    const answer = readTermuxJson(result.stdout, callLogSchema);
    return answer.kind === 'value' ? answer.value : null;
  }

  #run(config: PhoneObjectConfig, command: string, args: readonly string[]): Promise<TermuxResult> {
    return runTermux(command, args, { timeoutMs: config.command_timeout_ms, env: this.#env });
  }

  #wait(ms: number): Promise<void> {
    return Promise.race([this.#sleep(ms), this.#stopped]);
  }
}

const stoppedBeforeDialling: OpenOutcome = {
  outcome: 'failed',
  reason: 'modem_error',
  detail: 'the controller stopped before dialling',
};

/** A command that did not run to its end, in one line that says what to do. */
function termuxFailure(command: string, result: TermuxResult, config: PhoneObjectConfig): OpenOutcome {
  const detail =
    result.kind === 'missing'
      ? `${command} is not on PATH: install Termux:API's commands (pkg install termux-api)`
      : result.kind === 'timeout'
        ? `${command} did not answer within ${config.command_timeout_ms} ms: install the Termux:API app and open it once`
        : result.kind === 'failed'
          ? result.detail
          : `${command} answered`;
  return { outcome: 'failed', reason: 'modem_error', detail };
}
