import type { SerialPort } from 'serialport';
import type { GsmObjectConfig, ModemConfig, ObjectConfig } from '../config.js';
import { AtChannel, AtTimeoutError, redact } from './at-channel.js';
import { type Driver, DriverError, type OpenOutcome } from './driver.js';
import { OutgoingCall } from './modem-call.js';
import { parseRegistration, parseSignal } from './modem-responses.js';

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
  /** The call in progress, if any: one at a time, since the modem has one line. */
  #call: OutgoingCall | null = null;
  #busyChecking = false;
  #healthTimer: ReturnType<typeof setInterval> | null = null;
  #reopenTimer: ReturnType<typeof setTimeout> | null = null;
  #reopenDelay: number;
  #generation = 0;
  /** Call progress codes that arrived while a call is in progress, and a wake-up for the call loop. */
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
    this.#call?.cancel();
    if (this.#call && this.#at) await this.#hangUp();
    await this.#closePort();
  }

  async open(object: ObjectConfig): Promise<OpenOutcome> {
    const config = this.#objects.get(object.id);
    if (!config) throw new DriverError('modem_error', `no gsm object ${object.id}`);
    if (this.#call) return { outcome: 'failed', reason: 'busy', detail: 'the modem is in another call' };
    if (this.#state === 'sim_locked') {
      return { outcome: 'failed', reason: 'no_network', detail: 'the SIM is locked (PIN)' };
    }
    const at = this.#at;
    if (this.#state !== 'ready' || !at) {
      return { outcome: 'failed', reason: 'modem_error', detail: `the modem is ${this.#state}` };
    }
    const call = new OutgoingCall(at, config, {
      now: this.#now,
      commandTimeoutMs: this.#modem.command_timeout_ms,
      pollMs: this.#modem.poll_ms,
      ready: () => this.#state === 'ready',
    });
    this.#call = call;
    try {
      return await this.#dial(at, call);
    } catch (error) {
      if (error instanceof AtTimeoutError) this.#recover(`the modem stopped answering: ${error.message}`);
      return { outcome: 'failed', reason: 'modem_error', detail: (error as Error).message };
    } finally {
      if (this.#at === at && this.#state === 'ready') await this.#hangUp();
      this.#call = null;
    }
  }

  /** Registered on a network first (else `no_network`), then the call itself (modem-call.ts). */
  async #dial(at: AtChannel, call: OutgoingCall): Promise<OpenOutcome> {
    const reg = await at.command('AT+CREG?', { timeoutMs: this.#modem.command_timeout_ms });
    this.#registered = parseRegistration(reg);
    if (this.#registered === false) {
      return { outcome: 'failed', reason: 'no_network', detail: 'the modem is not registered on a network' };
    }
    // stop() may have hung up while AT+CREG? was answered: a dial now would leave a call up that nobody ends.
    if (this.#state !== 'ready') throw new DriverError('modem_error', `the modem is ${this.#state}`);
    return call.run();
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
      this.#call?.ended(line);
      return;
    }
    if (line === 'RING' && !this.#call && this.#state === 'ready') {
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
    if (this.#state !== 'ready' || this.#call || this.#busyChecking || !at) return;
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
