import { Agent, request } from 'node:http';

/**
 * Measuring HTTP calls over loopback the way a company's client makes them: keep-alive connections, one
 * call at a time per connection. Latency comes from sequential calls; throughput from several connections.
 */
export interface CallSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Figures {
  count: number;
  p50: number;
  p99: number;
  perSecond: number;
  /** The measurements behind the figures, so that runs can be combined. */
  latencies: number[];
  seconds: number;
}

export class Client {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });
  readonly #port: number;

  constructor(baseUrl: string) {
    this.#port = Number(new URL(baseUrl).port);
  }

  call(spec: CallSpec): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.#port,
          method: 'POST',
          path: spec.path,
          agent: this.#agent,
          headers: { 'content-type': 'application/json', ...spec.headers },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(spec.body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/**
 * Runs `make(connection)` then the call, `count` times per connection on `connections` connections (numbered
 * from 0, so that each can keep to its own resources); only the call is timed. Every answer must be 200, so a
 * benchmark never measures fast failures. `seconds` ends the run early on a slow machine.
 */
export async function measure(
  client: Client,
  make: (connection: number) => CallSpec,
  options: { count: number; connections: number; warmup?: number; seconds?: number },
): Promise<Figures> {
  for (let i = 0; i < (options.warmup ?? 50); i++) await expectOk(client.call(make(0)));
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round((options.seconds ?? 60) * 1e9));
  await Promise.all(
    Array.from({ length: options.connections }, async (_, connection) => {
      for (let i = 0; i < options.count && process.hrtime.bigint() < deadline; i++) {
        const spec = make(connection);
        const t0 = process.hrtime.bigint();
        await expectOk(client.call(spec));
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return figuresOf(latencies, Number(process.hrtime.bigint() - started) / 1e9);
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

async function expectOk(status: Promise<number>): Promise<void> {
  const code = await status;
  if (code !== 200) throw new Error(`benchmark call answered ${code}, expected 200`);
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
