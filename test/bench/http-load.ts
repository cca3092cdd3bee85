import { Agent, request } from 'node:http';
import type { CallSpec, FromLoad, LoadJob } from './measure.js';

/**
 * The child process of measure.ts's Client (started with fork, never on its own): makes the benchmark's HTTP
 * calls from a process of its own, as a company's client does, so that the measured server's work after an
 * answer is not counted as the answer's delay, nor the caller's work as the server's. One `run` message at a
 * time; keep-alive connections stay open from one run to the next, as a client's would.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(port: number, spec: CallSpec): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: spec.path,
        agent,
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

async function expectOk(port: number, spec: CallSpec): Promise<void> {
  const status = await call(port, spec);
  if (status !== 200) throw new Error(`benchmark call ${spec.path} answered ${status}, expected 200`);
}

/** The warm-up calls one after another, then each connection's calls, one at a time per connection. */
async function run(job: LoadJob): Promise<{ latencies: number[]; seconds: number }> {
  for (const spec of job.warmup) await expectOk(job.port, spec);
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(job.seconds * 1e9));
  await Promise.all(
    job.calls.map(async (calls) => {
      for (const spec of calls) {
        if (process.hrtime.bigint() >= deadline) break;
        const t0 = process.hrtime.bigint();
        await expectOk(job.port, spec);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return { latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function tell(message: FromLoad): void {
  process.send?.(message);
}

process.on('message', (job: LoadJob | { type: 'stop' }) => {
  if (job.type === 'stop') {
    agent.destroy();
    process.disconnect();
    return;
  }
  run(job).then(
    (result) => tell({ type: 'done', ...result }),
    (error: unknown) =>
      tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
  );
});
tell({ type: 'ready' });
