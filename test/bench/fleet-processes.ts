import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadAnswer, LoadRun } from './fleet-load.js';

/**
 * The fleet benchmark's other processes: controllers (fleet-controllers.mjs, plain node on the compiled
 * runtime, as on a box) and clients (fleet-load.ts, forked with this process's loader), each spoken to over IPC.
 */
const CONTROLLERS = fileURLToPath(new URL('./fleet-controllers.mjs', import.meta.url));
const LOAD = fileURLToPath(new URL('./fleet-load.ts', import.meta.url));

class Child {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #messages: unknown[] = [];
  #wake: (() => void) | null = null;

  constructor(child: ChildProcess) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (message) => {
      this.#messages.push(message);
      this.#wake?.();
    });
  }

  send(message: unknown): void {
    this.#child.send(message as object);
  }

  /** The next message; fails when the process ends first or `limitMs` passes. */
  async next<T>(limitMs: number): Promise<T> {
    const deadline = Date.now() + limitMs;
    while (this.#messages.length === 0) {
      if (this.#child.exitCode !== null) throw new Error('a benchmark process ended early');
      if (Date.now() > deadline) throw new Error(`a benchmark process said nothing for ${limitMs / 1000} s`);
      await Promise.race([
        new Promise<void>((resolve) => {
          this.#wake = resolve;
        }),
        this.#exited,
        new Promise((resolve) => setTimeout(resolve, 1000)),
      ]);
      this.#wake = null;
    }
    return this.#messages.shift() as T;
  }

  async stop(message: unknown): Promise<void> {
    if (this.#child.exitCode === null && this.#child.connected) this.send(message);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/** Controllers from `configs`, spread over `processes` processes; resolves once every one has started. */
export async function startControllerProcesses(configs: string[], processes: number): Promise<Child[]> {
  const children = Array.from(
    { length: processes },
    () => new Child(fork(CONTROLLERS, [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })),
  );
  await Promise.all(
    children.map(async (child, index) => {
      await child.next(30_000);
      child.send({ type: 'start', configs: configs.filter((_, i) => i % processes === index) });
      const answer = await child.next<{ type: string; message?: string }>(120_000);
      if (answer.type !== 'ready') throw new Error(`controllers did not start: ${answer.message}`);
    }),
  );
  return children;
}

export function stopControllerProcesses(children: Child[]): Promise<unknown> {
  return Promise.allSettled(children.map((child) => child.stop({ type: 'stop' })));
}

/** Client processes sending open-loop load (fleet-load.ts). */
export class LoadProcesses {
  readonly #children: Child[];

  private constructor(children: Child[]) {
    this.#children = children;
  }

  static async start(count: number): Promise<LoadProcesses> {
    const children = Array.from(
      { length: count },
      () => new Child(fork(LOAD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
    );
    await Promise.all(children.map((child) => child.next(30_000)));
    return new LoadProcesses(children);
  }

  get count(): number {
    return this.#children.length;
  }

  /** Each process its own calls at its share of the rate, all at once; the answers of all. */
  async run(port: number, totalRate: number, callsByProcess: LoadRun['calls'][]): Promise<LoadAnswer[]> {
    const rate = totalRate / this.#children.length;
    return Promise.all(
      this.#children.map(async (child, i) => {
        child.send({ type: 'run', port, rate, calls: callsByProcess[i]! } satisfies LoadRun);
        return child.next<LoadAnswer>(120_000);
      }),
    );
  }

  stop(): Promise<unknown> {
    return Promise.allSettled(this.#children.map((child) => child.stop({ type: 'stop' })));
  }
}
