import { Agent } from 'node:http';
import { httpCall } from './http-calls.js';
import type { CallSpec } from './measure.js';

/**
 * Part of `npm run bench -- fleet`: one of the client processes (forked by fleet.ts, never run alone). Sends its
 * calls at a fixed rate whatever the answers do (open loop, as independent companies' servers would), each
 * timed from the moment it was due rather than sent, so a server falling behind shows in the latencies instead
 * of slowing the load down.
 */
export interface LoadRun {
  type: 'run';
  port: number;
  /** Calls per second from this process. */
  rate: number;
  calls: CallSpec[];
}

export interface LoadAnswer {
  type: 'done';
  latencies: number[];
  seconds: number;
  /** Answers other than 200, by status. */
  refused: Record<string, number>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 512 });
/** How often the sender wakes to send what is due: due calls go together, late by at most this. */
const TICK_MS = 1;

function run(job: LoadRun): Promise<LoadAnswer> {
  const latencies: number[] = [];
  const refused: Record<string, number> = {};
  const started = performance.now();
  const interval = 1000 / job.rate;
  let next = 0;
  let finished = 0;
  return new Promise((resolve) => {
    const settle = (due: number) => (status: number) => {
      if (status === 200) latencies.push(performance.now() - due);
      else refused[status] = (refused[status] ?? 0) + 1;
      finished++;
      if (finished === job.calls.length) {
        resolve({ type: 'done', latencies, seconds: (performance.now() - started) / 1000, refused });
      }
    };
    const send = () => {
      const now = performance.now();
      while (next < job.calls.length && started + next * interval <= now) {
        const due = started + next * interval;
        httpCall(agent, job.port, job.calls[next]!).then(settle(due), () => settle(due)(0));
        next++;
      }
      if (next < job.calls.length) setTimeout(send, TICK_MS);
    };
    send();
  });
}

process.on('message', (job: LoadRun | { type: 'stop' }) => {
  if (job.type === 'stop') {
    agent.destroy();
    process.disconnect();
    return;
  }
  run(job).then((answer) => process.send?.(answer));
});
process.send?.({ type: 'ready' });
