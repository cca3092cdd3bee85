import type { SerialPort } from 'serialport';
import type { GsmObjectConfig, ModemConfig, ObjectConfig } from '../config.js';
import { AtChannel, type AtResponse, AtTimeoutError, redact } from './at-channel.js';
import { type Driver, DriverError, type DriverFailure, type OpenOutcome } from './driver.js';

/**
 * Phone-call barriers: a GSM module at the gate opens when a known number calls it and then drops the call.
 * This driver dials that module through a modem on a serial port (3GPP TS 27.007 AT commands).
 *
 * - Start: ATZ, ATE0, AT+CMEE=1, ATH, SIM PIN if asked for (entered once; a wrong PIN is never retried, so the SIM
 *   is not locked to its PUK), then the modem is `ready`.
 * - Opening: AT+CREG? (not registered: `no_network`), `ATD<number>;`, then AT+CLCC polling until the call is
 *   alerting (+CLCC stat 3) or active (stat 0): that is `opened`. It rings for `ring_hold_ms` unless the
 *   module drops it first, then ATH. BUSY, NO CARRIER, NO ANSWER and NO DIALTONE before it rang are `busy`,
 *   `no_carrier`, `no_answer` and `no_network`; after it rang they are how the module drops the call.
 *   No ringing within `ring_timeout_ms` is `no_answer`. ERROR or a command without answer is `modem_error`.
 * - Health: while idle the modem is asked for AT+CSQ and AT+CREG? every `health_interval_ms`. A modem that
 *   stops answering, or a port that disappears, is closed and reopened with a growing delay
 *   (`reopen_min_ms` doubling up to `reopen_max_ms`), then initialised again.
 */
export type ModemState = 'closed' | 'opening' | 'ready' | 'sim_locked' | 'reopening' | 'stopped';

export interface ModemGsmDriverOptions {
  modem: ModemConfig;
  objects: readonly GsmObjectConfig[];
  /** The SerialPort class; by default the serialport package's, loaded only when this driver starts. */
  SerialPort?: typeof SerialPort;
  now?: () => number;
  log?: (line: string) => void;
}

/** +CLCC: <idx>,<dir>,<stat>,<mode>,<mpty>[,<number>,<type>] */
interface CallLine {
  index: number;
  outgoing: boolean;
  stat: number;
}

/** Call states of +CLCC (27.007 7.18). */
const CLCC_ACTIVE = 0;
const CLCC_ALERTING = 3;

export class ModemGsmDriver implements Driver {
  readonly kind = 'gsm';
  readonly faultReason = 'modem_error';
  readonly #modem: ModemConfig;
  readonly #objects: Map<string, GsmObjectConfig>;
  readonly #now: () => number;
  readonly #log: (line: string) => void;
  #SerialPort: typeof SerialPort | undefined;
  #port: SerialPort | null = null;
  #at: AtChannel | null = null;
  #state: ModemState = 'closed';
  #stateListeners = new Set<(state: ModemState) => void>();
  #signal: number | null = null;
  #registered: boolean | null = null;
  #inCall = false;
  #busyChecking = false;
  #healthTimer: ReturnType<typeof setInterval> | null = null;
  #reopenTimer: ReturnType<typeof setTimeout> | null = null;
  #reopenDelay: number;
  #generation = 0;
  /** Call progress codes that arrived while a call is in progress, and a wake-up for the call loop. */
  #callEvents: string[] = [];
  #wake: (() => void) | null = null;
  /** Set once a SIM PIN was refused: entering it again could lock the SIM. */
  #pinRefused = false;

  constructor(options: ModemGsmDriverOptions) {
    this.#modem = options.modem;
    this.#objects = new Map(options.objects.map((object) => [object.id, object]));
    this.#SerialPort = options.SerialPort;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => undefined);
    this.#reopenDelay = options.modem.reopen_min_ms;
  }

  get state(): ModemState {
    return this.#state;
  }

  /** Calls `listener` on every state change; returns a function that removes it. */
  onState(listener: (state: ModemState) => void): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
  }

  signalQuality(): number | null {
    return this.#signal;
  }

  async start(): Promise<void> {
    if (!this.#SerialPort) {
      try {
        this.#SerialPort = (await import('serialport')).SerialPort;
      } catch (error) {
        throw new DriverError('modem_error', `cannot load serialport: ${(error as Error).message}`);
      }
    }
    this.#setState('opening');
    const ok = await this.#connect();
    if (this.state === 'stopped') {
      await this.#closePort();
      return;
    }
    if (!ok) this.#scheduleReopen();
    this.#healthTimer = setInterval(() => void this.#checkHealth(), this.#modem.health_interval_ms);
    this.#healthTimer.unref?.();
  }

  async stop(): Promise<void> {
    this.#setState('stopped');
    if (this.#healthTimer) clearInterval(this.#healthTimer);
    if (this.#reopenTimer) clearTimeout(this.#reopenTimer);
    this.#healthTimer = null;
    this.#reopenTimer = null;
    this.#wake?.();
    if (this.#inCall && this.#at) await this.#hangUp();
    await this.#closePort();
  }

  async open(object: ObjectConfig): Promise<OpenOutcome> {
    const config = this.#objects.get(object.id);
    if (!config) throw new DriverError('modem_error', `no gsm object ${object.id}`);
    if (this.#inCall) return { outcome: 'failed', reason: 'busy', detail: 'the modem is in another call' };
    if (this.#state === 'sim_locked') {
      return { outcome: 'failed', reason: 'no_network', detail: 'the SIM is locked (PIN)' };
    }
    const at = this.#at;
    if (this.#state !== 'ready' || !at) {
      return { outcome: 'failed', reason: 'modem_error', detail: `the modem is ${this.#state}` };
    }
    this.#inCall = true;
    this.#callEvents = [];
    try {
      return await this.#call(at, config);
    } catch (error) {
      if (error instanceof AtTimeoutError) this.#recover(`the modem stopped answering: ${error.message}`);
      return { outcome: 'failed', reason: 'modem_error', detail: (error as Error).message };
    } finally {
      if (this.#at === at && this.#state === 'ready') await this.#hangUp();
      this.#inCall = false;
      this.#callEvents = [];
    }
  }

  async #call(at: AtChannel, config: GsmObjectConfig): Promise<OpenOutcome> {
    const timeoutMs = this.#modem.command_timeout_ms;
    const reg = await at.command('AT+CREG?', { timeoutMs });
    this.#registered = parseRegistration(reg);
    if (this.#registered === false) {
      return { outcome: 'failed', reason: 'no_network', detail: 'the modem is not registered on a network' };
    }
    // stop() may have hung up while AT+CREG? was answered: a dial now would leave a call up that nobody ends.
    if (this.#state !== 'ready') throw new DriverError('modem_error', `the modem is ${this.#state}`);
    const started = this.#now();
    const dial = await at.command(`ATD${config.number};`, { timeoutMs, callResults: true });
    if (dial.final !== 'OK') return failure(dial.final);

    let rangAt: number | null = null;
    let seen = false;
    for (;;) {
      const event = this.#callEvents.shift();
      if (event !== undefined) {
        if (rangAt !== null) return { outcome: 'opened' };
        return failure(event);
      }
      const calls = parseCalls((await at.command('AT+CLCC', { timeoutMs })).lines);
      const call = calls.find((line) => line.outgoing);
      if (call) seen = true;
      if (call && (call.stat === CLCC_ALERTING || call.stat === CLCC_ACTIVE)) rangAt ??= this.#now();
      if (!call && seen && this.#callEvents.length === 0) {
        // The call is gone: dropped by the module after ringing, or ended before it rang.
        if (rangAt !== null) return { outcome: 'opened' };
        return { outcome: 'failed', reason: 'no_carrier', detail: 'the call ended before it rang' };
      }
      if (rangAt !== null && this.#now() - rangAt >= config.ring_hold_ms) return { outcome: 'opened' };
      if (rangAt === null && this.#now() - started >= config.ring_timeout_ms) {
        return {
          outcome: 'failed',
          reason: 'no_answer',
          detail: `it did not ring within ${config.ring_timeout_ms} ms`,
        };
      }
      if (this.#state !== 'ready')
        throw new DriverError('modem_error', 'the modem went away during the call');
      await this.#waitForEvent(this.#modem.poll_ms);
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

  async #hangUp(): Promise<void> {
    try {
      await this.#at?.command('ATH', { timeoutMs: this.#modem.command_timeout_ms });
    } catch (error) {
      if (error instanceof AtTimeoutError) this.#recover('the modem did not answer ATH');
    }
  }

  #onUnsolicited(line: string): void {
    if (line === 'BUSY' || line === 'NO CARRIER' || line === 'NO ANSWER' || line === 'NO DIALTONE') {
      if (this.#inCall) {
        this.#callEvents.push(line);
        this.#wake?.();
      }
      return;
    }
    if (line === 'RING' && !this.#inCall && this.#state === 'ready') {
      // Nobody answers calls to the controller; hanging up keeps the line free for openings.
      void this.#hangUp();
    }
  }

  /** Opens the port and initialises the modem; true when it is ready (or SIM-locked, which reopening won't fix). */
  async #connect(): Promise<boolean> {
    const generation = ++this.#generation;
    const Port = this.#SerialPort!;
    const port = new Port({ path: this.#modem.path, baudRate: this.#modem.baud_rate, autoOpen: false });
    try {
      await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    } catch (error) {
      this.#log(`modem: cannot open ${this.#modem.path}: ${(error as Error).message}`);
      return false;
    }
    const at = new AtChannel(port, (line) => this.#onUnsolicited(line));
    port.on('data', (chunk: Buffer) => at.receive(chunk));
    port.on('error', (error: Error) => this.#log(`modem: ${error.message}`));
    port.on('close', () => {
      at.close();
      if (this.#generation === generation && this.#port === port) this.#recover('the modem port closed');
    });
    this.#port = port;
    this.#at = at;
    try {
      await this.#initialise(at);
    } catch (error) {
      this.#log(`modem: initialisation failed: ${(error as Error).message}`);
      await this.#closePort();
      return false;
    }
    this.#reopenDelay = this.#modem.reopen_min_ms;
    return true;
  }

  async #initialise(at: AtChannel): Promise<void> {
    const timeoutMs = this.#modem.command_timeout_ms;
    const expectOk = async (command: string) => {
      const response = await at.command(command, { timeoutMs });
      if (response.final !== 'OK') throw new Error(`${redact(command)} answered ${response.final}`);
      return response;
    };
    await expectOk('AT');
    await expectOk('ATZ');
    await expectOk('ATE0');
    await expectOk('AT+CMEE=1');
    // A call left over from before a reset or a restart must not keep the line (and the module) busy.
    await expectOk('ATH');
    const cpin = await at.command('AT+CPIN?', { timeoutMs });
    const simState = cpin.lines
      .find((line) => line.startsWith('+CPIN:'))
      ?.slice(6)
      .trim();
    if (simState !== 'READY') {
      if (simState === 'SIM PIN' && this.#modem.pin && !this.#pinRefused) {
        const answer = await at.command(`AT+CPIN="${this.#modem.pin}"`, { timeoutMs });
        if (answer.final !== 'OK') {
          this.#pinRefused = true;
          this.#log('modem: the SIM refused the PIN; fix modem.pin (it is not tried again until restart)');
          this.#setState('sim_locked');
          return;
        }
      } else {
        const why =
          simState === 'SIM PIN'
            ? 'the SIM needs a PIN: set modem.pin'
            : `SIM state ${simState ?? cpin.final}`;
        this.#log(`modem: ${why}`);
        this.#setState('sim_locked');
        return;
      }
    }
    await this.#refreshHealth(at);
    this.#setState('ready');
    this.#log(
      `modem: ready (signal ${this.#signal ?? 'unknown'}, registered ${this.#registered ?? 'unknown'})`,
    );
  }

  async #refreshHealth(at: AtChannel): Promise<void> {
    const timeoutMs = this.#modem.command_timeout_ms;
    const csq = await at.command('AT+CSQ', { timeoutMs });
    this.#signal = parseSignal(csq);
    this.#registered = parseRegistration(await at.command('AT+CREG?', { timeoutMs }));
  }

  async #checkHealth(): Promise<void> {
    const at = this.#at;
    if (this.#state !== 'ready' || this.#inCall || this.#busyChecking || !at) return;
    this.#busyChecking = true;
    try {
      await this.#refreshHealth(at);
    } catch (error) {
      if (this.#at === at) this.#recover(`the modem stopped answering: ${(error as Error).message}`);
    } finally {
      this.#busyChecking = false;
    }
  }

  /** Closes the port and reopens it later; safe to call more than once. */
  #recover(why: string): void {
    if (this.#state === 'stopped' || this.#state === 'reopening') return;
    this.#log(`modem: ${why}; reopening`);
    this.#signal = null;
    this.#setState('reopening');
    void this.#closePort().then(() => this.#scheduleReopen());
  }

  #scheduleReopen(): void {
    if (this.#state === 'stopped' || this.#reopenTimer) return;
    if (this.#state !== 'reopening') this.#setState('reopening');
    const delay = this.#reopenDelay;
    this.#reopenDelay = Math.min(this.#reopenDelay * 2, this.#modem.reopen_max_ms);
    this.#reopenTimer = setTimeout(async () => {
      this.#reopenTimer = null;
      if (this.#state === 'stopped') return;
      this.#setState('opening');
      const ok = await this.#connect();
      if (this.state === 'stopped') await this.#closePort();
      else if (!ok) this.#scheduleReopen();
    }, delay);
    this.#reopenTimer.unref?.();
  }

  async #closePort(): Promise<void> {
    const port = this.#port;
    this.#port = null;
    this.#at?.close();
    this.#at = null;
    this.#generation++;
    if (!port?.isOpen) return;
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  #setState(state: ModemState): void {
    if (this.#state === state) return;
    if (this.#state === 'stopped' && state !== 'stopped') return;
    this.#state = state;
    for (const listener of this.#stateListeners) listener(state);
  }
}

function failure(code: string): OpenOutcome {
  const reasons: Record<string, DriverFailure> = {
    BUSY: 'busy',
    'NO CARRIER': 'no_carrier',
    'NO ANSWER': 'no_answer',
    'NO DIALTONE': 'no_network',
  };
  const reason = reasons[code] ?? (isNoNetworkError(code) ? 'no_network' : 'modem_error');
  return { outcome: 'failed', reason, detail: code };
}

/** +CME ERROR 30 (no network service), 31 (network timeout), 32 (emergency calls only). */
function isNoNetworkError(code: string): boolean {
  const match = /^\+CME ERROR:\s*(\d+)/.exec(code);
  return match !== null && ['30', '31', '32'].includes(match[1]!);
}

/** +CREG: <n>,<stat>: 1 registered at home, 5 roaming; null when the answer has no such line. */
export function parseRegistration(response: AtResponse): boolean | null {
  for (const line of response.lines) {
    const match = /^\+CREG:\s*(?:\d+\s*,\s*)?(\d+)/.exec(line);
    if (match) return match[1] === '1' || match[1] === '5';
  }
  return null;
}

/** +CSQ: <rssi>,<ber>: rssi 0..31, 99 unknown. */
export function parseSignal(response: AtResponse): number | null {
  for (const line of response.lines) {
    const match = /^\+CSQ:\s*(\d+)/.exec(line);
    if (match) {
      const rssi = Number(match[1]);
      return rssi >= 0 && rssi <= 31 ? rssi : null;
    }
  }
  return null;
}

export function parseCalls(lines: readonly string[]): CallLine[] {
  const calls: CallLine[] = [];
  for (const line of lines) {
    const match = /^\+CLCC:\s*(\d+)\s*,\s*(\d)\s*,\s*(\d)/.exec(line);
    if (match) calls.push({ index: Number(match[1]), outgoing: match[2] === '0', stat: Number(match[3]) });
  }
  return calls;
}
