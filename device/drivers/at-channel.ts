/**
 * A line-oriented AT command channel over a byte stream (3GPP TS 27.007, ITU-T V.250).
 *
 * One command at a time: `command()` queues behind the one in progress. The modem's answer is every line up to a
 * final result code; lines that arrive while no command waits, or that cannot belong to the command in progress,
 * are unsolicited result codes and go to `onUnsolicited`. The call progress codes (BUSY, NO CARRIER, NO ANSWER,
 * NO DIALTONE) end only the commands that ask for them (ATD); at any other time they are unsolicited, because a
 * call can end while we are polling its state.
 */

/** The narrow part of a serial port that the channel needs. */
export interface ByteStream {
  write(data: string, callback: (error: Error | null | undefined) => void): void;
}

export const CALL_RESULTS = ['BUSY', 'NO CARRIER', 'NO ANSWER', 'NO DIALTONE'] as const;
export type CallResult = (typeof CALL_RESULTS)[number];

export interface AtResponse {
  /** The information lines, without the echo and the final result code. */
  lines: string[];
  /** The final result code: OK, ERROR, +CME ERROR: n, +CMS ERROR: n, or a call result when asked for. */
  final: string;
}

export class AtTimeoutError extends Error {
  override name = 'AtTimeoutError';
}

export class AtClosedError extends Error {
  override name = 'AtClosedError';
}

interface Pending {
  command: string;
  callResults: boolean;
  lines: string[];
  resolve: (response: AtResponse) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class AtChannel {
  readonly #stream: ByteStream;
  readonly #onUnsolicited: (line: string) => void;
  #buffer = '';
  #pending: Pending | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(stream: ByteStream, onUnsolicited: (line: string) => void) {
    this.#stream = stream;
    this.#onUnsolicited = onUnsolicited;
  }

  /** Feed bytes read from the port. */
  receive(chunk: Buffer | string): void {
    this.#buffer += chunk.toString('latin1');
    const parts = this.#buffer.split(/\r\n|\r|\n/);
    this.#buffer = parts.pop() ?? '';
    for (const part of parts) {
      const line = part.trim();
      if (line !== '') this.#line(line);
    }
  }

  /**
   * Sends `command` followed by CR and resolves with the answer; rejects with AtTimeoutError when no final
   * result code arrives within `timeoutMs`, or AtClosedError once the channel is closed.
   */
  command(command: string, options: { timeoutMs: number; callResults?: boolean }): Promise<AtResponse> {
    const run = () =>
      new Promise<AtResponse>((resolve, reject) => {
        if (this.#closed) {
          reject(new AtClosedError('the modem port is closed'));
          return;
        }
        const timer = setTimeout(() => {
          this.#pending = null;
          reject(new AtTimeoutError(`no answer to ${redact(command)} within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        this.#pending = {
          command,
          callResults: options.callResults ?? false,
          lines: [],
          resolve,
          reject,
          timer,
        };
        this.#stream.write(`${command}\r`, (error) => {
          if (error && this.#pending?.command === command) this.#fail(new AtClosedError(error.message));
        });
      });
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Rejects the command in progress and every later one. */
  close(): void {
    this.#closed = true;
    this.#fail(new AtClosedError('the modem port closed'));
  }

  #fail(error: Error): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = null;
    clearTimeout(pending.timer);
    pending.reject(error);
  }

  #line(line: string): void {
    const pending = this.#pending;
    if (!pending) {
      this.#onUnsolicited(line);
      return;
    }
    if (line === pending.command) return; // echo, before ATE0 takes effect
    const isCallResult = (CALL_RESULTS as readonly string[]).includes(line);
    if (isCallResult && !pending.callResults) {
      this.#onUnsolicited(line);
      return;
    }
    if (isFinal(line) || isCallResult) {
      this.#pending = null;
      clearTimeout(pending.timer);
      pending.resolve({ lines: pending.lines, final: line });
      return;
    }
    if (isUnsolicited(line)) {
      this.#onUnsolicited(line);
      return;
    }
    pending.lines.push(line);
  }
}

function isFinal(line: string): boolean {
  return line === 'OK' || line === 'ERROR' || line.startsWith('+CME ERROR') || line.startsWith('+CMS ERROR');
}

/** Codes a modem may send at any time; +CLCC and +CREG also answer queries, so they count only when unasked. */
function isUnsolicited(line: string): boolean {
  return line === 'RING' || line.startsWith('+CRING') || line.startsWith('+CLIP');
}

/** Keeps a SIM PIN out of error messages and logs. */
export function redact(command: string): string {
  return command.startsWith('AT+CPIN=') ? 'AT+CPIN=<pin>' : command;
}
