import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * MQTT clients for the benchmarks, run in a child process (bench-clients.ts) so that their CPU and memory are
 * not the measured process's. Parent and child talk over the IPC channel with these messages.
 */
export interface DeviceLogin {
  id: string;
  password: string;
}

/** A signed message on the wire in the floor measurement (floor.ts and its durable echo). */
export interface SignedEnvelope {
  body: string;
  /** Ed25519 over the bytes of `body`, base64. */
  sig: string;
}

/** What the attackers of the flood managed: connections made, and bytes their sockets took before each closed. */
export interface FloodFigures {
  connections: number;
  written: number;
  /** The most one connection got written before it was closed. */
  mostInOne: number;
}

export type ToClients =
  | { type: 'devices'; prefix: string; devices: DeviceLogin[] }
  | { type: 'flood'; attackers: number; seconds: number; declaredBytes: number }
  | { type: 'stop' };

export type FromClients =
  /** `publicKey`: the durable echo's Ed25519 key (SPKI DER, base64), which signs its replies. */
  | { type: 'ready'; publicKey?: string }
  | { type: 'progress'; connected: number }
  | { type: 'connected'; connected: number }
  | ({ type: 'flooded' } & FloodFigures)
  | { type: 'failed'; message: string };

const CHILD = fileURLToPath(new URL('./bench-clients.ts', import.meta.url));

export class ClientsProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  #waiting: { accept(message: FromClients): boolean; fail(error: Error): void } | null = null;
  #gone = false;

  /**
   * `echo <url>`: answers requests; `durable-echo <url> <dir> <key>`: answers them the way a controller
   * does; `devices <url>`: connects devices on request; `flood <url>`: attacks the broker on request (see
   * bench-clients.ts).
   */
  constructor(mode: 'echo' | 'durable-echo' | 'devices' | 'flood', url: string, ...args: string[]) {
    // The parent's execArgv (tsx's loader) is inherited, so the child runs TypeScript as the parent does.
    this.#child = fork(CHILD, [mode, url, ...args], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.#exited = new Promise((resolve) =>
      this.#child.once('exit', () => {
        this.#gone = true;
        this.#waiting?.fail(new Error('the benchmark clients process ended early'));
        resolve();
      }),
    );
    this.#child.on('message', (raw) => {
      const message = raw as FromClients;
      if (message.type === 'failed') this.#waiting?.fail(new Error(`benchmark clients: ${message.message}`));
      else if (this.#waiting?.accept(message)) this.#waiting = null;
    });
  }

  send(message: ToClients): void {
    this.#child.send(message);
  }

  /** Waits for a message of `type`, passing the others to `onOther`; fails after `timeoutMs`. */
  waitFor<T extends FromClients['type']>(
    type: T,
    timeoutMs: number,
    onOther: (message: FromClients) => void = () => undefined,
  ): Promise<Extract<FromClients, { type: T }>> {
    if (this.#gone) return Promise.reject(new Error('the benchmark clients process is not running'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = null;
        reject(new Error(`benchmark clients: no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting = {
        accept: (message) => {
          if (message.type !== type) {
            onOther(message);
            return false;
          }
          clearTimeout(timer);
          resolve(message as Extract<FromClients, { type: T }>);
          return true;
        },
        fail: (error) => {
          clearTimeout(timer);
          this.#waiting = null;
          reject(error);
        },
      };
    });
  }

  /** Asks the clients to disconnect cleanly and the process to end; kills it if it does not within 15 s. */
  async stop(): Promise<void> {
    if (this.#gone) return;
    if (this.#child.connected) this.#child.send({ type: 'stop' } satisfies ToClients);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(timer);
  }
}
