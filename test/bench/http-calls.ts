import { type Agent, request } from 'node:http';

/** One benchmark call: a POST with a JSON body, or a GET (a page, an export) whose body is ignored. */
export interface CallSpec {
  method?: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The calls of one measurement: untimed warm-up calls, then each connection's calls in order. */
export interface CallPlan {
  warmup: CallSpec[];
  calls: CallSpec[][];
  /** The measurement ends early after this long, on a slow machine. */
  seconds: number;
  /**
   * Paced: each connection starts a call every this many ms, the connections spread evenly over it, instead of
   * the next call as soon as the last is answered. A call due while the last is unanswered counts from when it
   * was due, so that a server falling behind is counted in full rather than slowing the caller down
   * (coordinated omission).
   */
  intervalMs?: number;
}

/** Makes one call on a keep-alive connection of `agent`; resolves with the status once the body is read. */
export function httpCall(agent: Agent, port: number, spec: CallSpec): Promise<number> {
  const method = spec.method ?? 'POST';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: spec.path,
        agent,
        headers: method === 'POST' ? { 'content-type': 'application/json', ...spec.headers } : spec.headers,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? spec.body : undefined);
  });
}

/**
 * Runs a plan: the warm-up calls one after another, then one call at a time per connection, all connections
 * at once, each as soon as the last is answered or, paced, when due; only the latter are timed. Every answer
 * must be 200, so a benchmark never measures fast failures.
 */
export async function runPlan(
  plan: CallPlan,
  call: (spec: CallSpec) => Promise<number>,
): Promise<{ latencies: number[]; seconds: number }> {
  const expectOk = async (spec: CallSpec) => {
    const status = await call(spec);
    if (status !== 200) throw new Error(`benchmark call ${spec.path} answered ${status}, expected 200`);
  };
  for (const spec of plan.warmup) await expectOk(spec);
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(plan.seconds * 1e9));
  const interval = plan.intervalMs === undefined ? null : BigInt(Math.round(plan.intervalMs * 1e6));
  await Promise.all(
    plan.calls.map(async (calls, connection) => {
      const offset = interval === null ? 0n : (interval * BigInt(connection)) / BigInt(plan.calls.length);
      for (const [i, spec] of calls.entries()) {
        const due = interval === null ? process.hrtime.bigint() : started + offset + interval * BigInt(i);
        if (due >= deadline) break;
        // A call whose turn came while the last was unanswered counts from when it was due; one that waited
        // for its turn counts from when it went, so that a timer's lateness is never put on the server.
        const t0 = process.hrtime.bigint() < due ? await until(due) : due;
        await expectOk(spec);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return { latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** Waits until `due` on the monotonic clock; resolves with the time it woke. */
async function until(due: bigint): Promise<bigint> {
  await new Promise((resolve) => setTimeout(resolve, Number(due - process.hrtime.bigint()) / 1e6));
  return process.hrtime.bigint();
}
