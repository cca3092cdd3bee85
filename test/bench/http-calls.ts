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
 * at once; only the latter are timed. Every answer must be 200, so a benchmark never measures fast failures.
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
  await Promise.all(
    plan.calls.map(async (calls) => {
      for (const spec of calls) {
        if (process.hrtime.bigint() >= deadline) break;
        const t0 = process.hrtime.bigint();
        await expectOk(spec);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return { latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
