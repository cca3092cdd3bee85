import { SerialPort } from 'serialport';

/**
 * A simulated GSM modem on one end of a pseudo-terminal pair. It answers the AT commands the driver sends,
 * through the real serialport stack, and plays a call scenario. Call progress is driven by the driver's
 * AT+CLCC polls rather than by time, so the tests do not depend on timing.
 */
export type CallScenario =
  /** Dialling, then ringing (alerting), then the module drops the call (NO CARRIER). */
  | 'ring-then-drop'
  /** Dialling, then ringing, then the module rejects it (BUSY). */
  | 'ring-then-busy'
  /** BUSY before it ever rang. */
  | 'busy'
  /** NO CARRIER before it ever rang. */
  | 'no-carrier'
  /** NO ANSWER before it ever rang. */
  | 'no-answer'
  /** Stays dialling without ringing, until the driver gives up. */
  | 'never-rings';

interface Call {
  number: string;
  stat: number;
  polls: number;
}

export class FakeModem {
  scenario: CallScenario = 'ring-then-drop';
  registered = true;
  signal = 18;
  /** While true the modem reads commands and answers nothing. */
  mute = false;
  /** Every command received, in order. */
  readonly received: string[] = [];
  /** The number of every call that rang (alerting) at the barrier's module, in order. */
  readonly rang: string[] = [];
  readonly #port: SerialPort;
  #buffer = '';
  #call: Call | null = null;

  private constructor(port: SerialPort) {
    this.#port = port;
    port.on('data', (chunk: Buffer) => this.#receive(chunk.toString('latin1')));
    port.on('error', () => undefined);
  }

  static async open(path: string): Promise<FakeModem> {
    const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    return new FakeModem(port);
  }

  /** How many times a command starting with `prefix` was received. */
  count(prefix: string): number {
    return this.received.filter((line) => line.startsWith(prefix)).length;
  }

  /** True while a call is up: dialling, ringing or answered, until the driver hangs up or the module drops it. */
  get callActive(): boolean {
    return this.#call !== null;
  }

  /** A call left up from before, as after a reset in the middle of a call. */
  leaveCallUp(): void {
    this.#call = { number: '+490000000000', stat: 0, polls: 0 };
  }

  async close(): Promise<void> {
    if (!this.#port.isOpen) return;
    await new Promise<void>((resolve) => this.#port.close(() => resolve()));
  }

  #receive(text: string): void {
    this.#buffer += text;
    const parts = this.#buffer.split('\r');
    this.#buffer = parts.pop() ?? '';
    for (const part of parts) {
      const command = part.trim();
      if (command === '') continue;
      this.received.push(command);
      if (!this.mute) this.#answer(command);
    }
  }

  #send(...lines: string[]): void {
    if (!this.#port.isOpen) return;
    this.#port.write(lines.map((line) => `\r\n${line}\r\n`).join(''), () => undefined);
  }

  #answer(command: string): void {
    if (command === 'AT' || command === 'ATZ' || command === 'ATE0' || command.startsWith('AT+CMEE')) {
      this.#send('OK');
    } else if (command === 'AT+CPIN?') {
      this.#send('+CPIN: READY', 'OK');
    } else if (command === 'AT+CSQ') {
      this.#send(`+CSQ: ${this.signal},99`, 'OK');
    } else if (command === 'AT+CREG?') {
      this.#send(`+CREG: 0,${this.registered ? 1 : 0}`, 'OK');
    } else if (command === 'ATH') {
      this.#call = null;
      this.#send('OK');
    } else if (command.startsWith('ATD')) {
      this.#dial(command.slice(3).replace(/;$/, ''));
    } else if (command === 'AT+CLCC') {
      this.#poll();
    } else {
      this.#send('ERROR');
    }
  }

  #dial(number: string): void {
    if (!this.registered) {
      this.#send('NO CARRIER');
      return;
    }
    this.#send('OK');
    const early: Partial<Record<CallScenario, string>> = {
      busy: 'BUSY',
      'no-carrier': 'NO CARRIER',
      'no-answer': 'NO ANSWER',
    };
    const code = early[this.scenario];
    if (code) {
      this.#call = null;
      setImmediate(() => this.#send(code));
      return;
    }
    this.#call = { number, stat: 2, polls: 0 };
  }

  /** First poll: dialling; second: alerting; third: the module ends the call (ring-then-* scenarios). */
  #poll(): void {
    const call = this.#call;
    if (call) {
      call.polls++;
      if (this.scenario !== 'never-rings' && call.polls === 2) {
        call.stat = 3;
        this.rang.push(call.number);
      }
      if (this.scenario !== 'never-rings' && call.polls >= 3) {
        this.#call = null;
        this.#send(this.scenario === 'ring-then-busy' ? 'BUSY' : 'NO CARRIER', 'OK');
        return;
      }
      this.#send(`+CLCC: 1,0,${call.stat},0,0,"${call.number}",145`, 'OK');
      return;
    }
    this.#send('OK');
  }
}
