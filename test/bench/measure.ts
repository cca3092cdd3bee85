import { type ChildProcess, fork } from 'node:child_process';
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type CallPlan, type CallSpec, httpCall, runPlan } from './http-calls.js';

export type { CallSpec };

export interface Figures {
  count: number;
  p50: number;
  p99: number;
  perSecond: number;
  /** The measurements behind the figures, so that runs can be combined. */
  latencies: number[];
  seconds: number;
}

/** One measurement, sent to the load process. */
export interface LoadJob extends CallPlan {
  type: 'run';
  port: number;
}

export type FromLoad =
  | { type: 'ready' }
  | { type: 'done'; latencies: number[]; seconds: number }
  | { type: 'failed'; message: string };

const LOAD_CHILD = fileURLToPath(new URL('./http-load.ts', import.meta.url));
const SAME_PROCESS = process.env.BENCH_CLIENT === 'same-process';

/**
 * Measuring HTTP calls over loopback the way a company's client makes them: from a process of its own
 * (http-load.ts), on keep-alive connections, one call at a time per connection. Latency comes from sequential
 * calls; throughput from several connections. `BENCH_CLIENT=same-process` makes the calls from the measured
 * process instead, as earlier versions of these benchmarks did: there the server's work after an answer (the
 * journal write of `open`) holds up the client's reading of it, and the baseline gains from having client and
 * server on one thread. Running both ways on the same build shows what the difference is.
 */
export class Client {
  readonly #port: number;
  readonly #load: LoadProcess | null;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(baseUrl: string) {
    this.#port = Number(new URL(baseUrl).port);
    this.#load = SAME_PROCESS ? null : new LoadProcess();
  }

  run(plan: CallPlan): Promise<{ latencies: number[]; seconds: number }> {
    if (this.#load) return this.#load.run({ type: 'run', port: this.#port, ...plan });
    return runPlan(plan, (spec) => httpCall(this.#agent, this.#port, spec));
  }

  async close(): Promise<void> {
    this.#agent.destroy();
    await this.#load?.stop();
  }
}

/** http-load.ts in a child process; the parent's execArgv (tsx's loader) is inherited. */
class LoadProcess {
  readonly #child: ChildProcess;
  readonly #ready: Promise<void>;
  readonly #exited: Promise<void>;
  #answer: ((message: FromLoad) => void) | null = null;

  constructor() {
    this.#child = fork(LOAD_CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#exited = new Promise((resolve) => this.#child.once('exit', () => resolve()));
    this.#ready = new Promise((resolve, reject) => {
      this.#answer = (message) =>
        message.type === 'ready'
          ? resolve()
          : reject(new Error(`the benchmark load process did not start: ${JSON.stringify(message)}`));
      void this.#exited.then(() => reject(new Error('the benchmark load process ended early')));
    });
    this.#child.on('message', (message) => this.#answer?.(message as FromLoad));
  }

  async run(job: LoadJob): Promise<{ latencies: number[]; seconds: number }> {
    await this.#ready;
    const answer = new Promise<FromLoad>((resolve, reject) => {
      this.#answer = resolve;
      void this.#exited.then(() => reject(new Error('the benchmark load process ended early')));
    });
    this.#child.send(job);
    const message = await answer;
    this.#answer = null;
    if (message.type === 'failed') throw new Error(message.message);
    if (message.type !== 'done') throw new Error(`unexpected ${message.type} from the load process`);
    return { latencies: message.latencies, seconds: message.seconds };
  }

  /** Asks the process to end once it listens (a message sent before is lost); kills it after 10 s. */
  async stop(): Promise<void> {
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
    const ready = await Promise.race([
      this.#ready.then(
        () => true,
        () => false,
      ),
      this.#exited.then(() => false),
    ]);
    if (ready && this.#child.connected) this.#child.send({ type: 'stop' });
    await this.#exited;
    clearTimeout(timer);
  }
}

/**
 * Makes `count` calls per connection on `connections` connections (numbered from 0, so that each can keep to
 * its own resources), made ahead by `make(connection)`, after `warmup` untimed ones; only the calls are timed.
 * Every answer must be 200, so a benchmark never measures fast failures. `seconds` ends the run early on a slow
 * machine.
 */
export async function measure(
  client: Client,
  make: (connection: number) => CallSpec,
  options: { count: number; connections: number; warmup?: number; seconds?: number; intervalMs?: number },
): Promise<Figures> {
  const warmup = Array.from({ length: options.warmup ?? 50 }, () => make(0));
  const calls = Array.from({ length: options.connections }, (_, connection) =>
    Array.from({ length: options.count }, () => make(connection)),
  );
  const { latencies, seconds } = await client.run({
    warmup,
    calls,
    seconds: options.seconds ?? 60,
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
  return figuresOf(latencies, seconds);
}

/** p50, p99 and rate of latencies in milliseconds measured over `seconds`. */
export function figuresOf(latencies: number[], seconds: number): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    perSecond: sorted.length / seconds,
    latencies,
    seconds,
  };
}

/**
 * A benchmark and its baselines are measured in turns, in this many rounds, so that the machine's slower and
 * faster moments fall on all of them alike and their ratio holds still from run to run.
 */
export const ROUNDS = 5;

/** The figures of several runs of the same measurement taken together. */
export function combined(runs: Figures[]): Figures {
  return figuresOf(
    runs.flatMap((run) => run.latencies),
    runs.reduce((sum, run) => sum + run.seconds, 0),
  );
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function formatFigures(name: string, figures: Figures): string {
  return `${name.padEnd(34)} p50 ${figures.p50.toFixed(3).padStart(7)} ms  p99 ${figures.p99
    .toFixed(3)
    .padStart(7)} ms  ${figures.perSecond.toFixed(0).padStart(6)}/s  (${figures.count} calls)`;
}
