import { Agent } from 'node:http';
import { httpCall, runPlan } from './http-calls.js';
import type { FromLoad, LoadJob } from './measure.js';

/**
 * The child process of measure.ts's Client (started with fork, never on its own): makes the benchmark's HTTP
 * calls from a process of its own, as a company's client does, so that the measured server's work after an
 * answer is not counted as the answer's delay, nor the caller's work as the server's. One `run` message at a
 * time; keep-alive connections stay open from one run to the next, as a client's would.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function tell(message: FromLoad): void {
  process.send?.(message);
}

process.on('message', (job: LoadJob | { type: 'stop' }) => {
  if (job.type === 'stop') {
    agent.destroy();
    process.disconnect();
    return;
  }
  runPlan(job, (spec) => httpCall(agent, job.port, spec)).then(
    (result) => tell({ type: 'done', ...result }),
    (error: unknown) =>
      tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
  );
});
tell({ type: 'ready' });
