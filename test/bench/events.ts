import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { DEFAULT_DELIVERY, EventDelivery } from '../../cloud/links/event-delivery/delivery-worker.js';
import { createCompany } from '../../cloud/rules/companies/companies.js';
import { ping } from '../../cloud/rules/events/event-data.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { firstSigningSecret } from '../support/event-company.js';
import { percentile } from './measure.js';

/**
 * `npm run bench -- events` (issue 15): events delivered per second from the outbox to a local receiver, beside
 * that receiver's own request rate from a plain HTTP client in the same run, and the delay from an event's
 * commit to its arrival once the worker is idle. Targets: at least 1,000 events a second, p50 delay under
 * 50 ms. The receiver (webhook-sink.ts) runs in a process of its own, as a company's server would.
 */
const SINK = fileURLToPath(new URL('./webhook-sink.ts', import.meta.url));
const COMPANIES = 16;
const EVENTS = 20_000;
const IDLE_EVENTS = 200;

export async function benchEvents(label: string, serverUrl: string | undefined): Promise<void> {
  const database = await createTestDatabase(serverUrl);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  const sink = await Sink.start();
  let cloud: RunningCloud | undefined;
  let worker: EventDelivery | undefined;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir),
      database,
      jobs: false,
      eventDelivery: false,
    });
    const { ctx } = cloud;
    const url = `http://127.0.0.1:${sink.port}/hooks`;
    const companies: number[] = [];
    for (let i = 0; i < COMPANIES; i++) {
      const company = await createCompany(ctx, { name: `Bench ${i}` });
      // As every endpoint has: each delivery is signed v1 as well as v1a.
      await firstSigningSecret(ctx, company.id, url);
      companies.push(company.id);
    }
    console.log(`\n## events on ${label} (${COMPANIES} companies, receiver in its own process)`);

    const plain = await plainRate(sink.port, COMPANIES, EVENTS);
    console.log(
      `receiver alone, plain HTTP client   ${plain.toFixed(0)}/s  (${COMPANIES} connections, keep-alive)`,
    );

    await fillOutbox(database, companies, EVENTS);
    const delivery = { ...DEFAULT_DELIVERY, allowPrivateAddresses: true };
    worker = new EventDelivery({ ctx, database, delivery });
    sink.arrived.clear();
    const started = performance.now();
    await worker.start();
    await sink.until(EVENTS);
    const seconds = (performance.now() - started) / 1000;
    const rate = EVENTS / seconds;
    console.log(
      `delivered from the outbox           ${rate.toFixed(0)}/s  (${EVENTS} events, target >= 1000/s)`,
    );
    console.log(`ratio: delivered / receiver alone   ${(rate / plain).toFixed(2)}`);

    const delays = await idleDelays(ctx, sink, companies);
    const sorted = [...delays].sort((a, b) => a - b);
    console.log(
      `commit to arrival, idle worker      p50 ${percentile(sorted, 0.5).toFixed(2)} ms  p99 ${percentile(sorted, 0.99).toFixed(2)} ms  (${IDLE_EVENTS} events one at a time, target p50 < 50 ms)`,
    );
  } finally {
    await worker?.stop();
    await cloud?.stop();
    await database.close();
    sink.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `count` test events spread over the companies, written in a few large statements. */
async function fillOutbox(database: TestDatabase, companies: number[], count: number): Promise<void> {
  const data = JSON.stringify(ping());
  const perCompany = Math.ceil(count / companies.length);
  let left = count;
  for (const companyId of companies) {
    const n = Math.min(perCompany, left);
    left -= n;
    await sql`
      insert into events (id, company_id, type, data, at, next_attempt_at)
      select gen_random_uuid(), ${companyId}, 'ping', cast(${data} as jsonb), now(), now()
        from generate_series(1, ${n})`.execute(database.db);
  }
}

/** Events committed one at a time, each after the last arrived and a pause: the delay of an idle worker. */
async function idleDelays(ctx: RunningCloud['ctx'], sink: Sink, companies: number[]): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; i < IDLE_EVENTS; i++) {
    const companyId = companies[i % companies.length]!;
    let id = '';
    await ctx.db.transaction().execute(async (trx) => {
      await enqueueEvent(trx, { companyId, type: 'ping', at: ctx.clock.now(), data: ping() });
      id = (
        await trx
          .selectFrom('events')
          .select('id')
          .where('company_id', '=', companyId)
          .orderBy('seq', 'desc')
          .limit(1)
          .executeTakeFirstOrThrow()
      ).id;
    });
    const committed = performance.timeOrigin + performance.now();
    const arrived = await sink.arrival(id);
    delays.push(arrived - committed);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return delays;
}

/** The receiver's own rate: POSTs of an event's size from `connections` keep-alive connections. */
async function plainRate(port: number, connections: number, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const body = JSON.stringify({
    type: 'ping',
    id: '00000000-0000-4000-8000-000000000000',
    at: '',
    data: ping(),
  });
  let left = count;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/hooks',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (response) => {
          response.resume();
          response.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (left-- > 0) await post();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return count / seconds;
}

class Sink {
  readonly arrived = new Map<string, number>();
  readonly #waiters = new Map<string, (at: number) => void>();

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.on('message', (message: { type: string; arrivals?: [string, number][] }) => {
      for (const [id, at] of message.arrivals ?? []) {
        if (!this.arrived.has(id)) this.arrived.set(id, at);
        this.#waiters.get(id)?.(at);
        this.#waiters.delete(id);
      }
    });
  }

  static async start(): Promise<Sink> {
    const child = fork(SINK, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (message: { port: number }) => resolve(message.port));
      child.once('exit', () => reject(new Error('the webhook sink exited')));
    });
    return new Sink(child, port);
  }

  arrival(id: string): Promise<number> {
    const at = this.arrived.get(id);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => this.#waiters.set(id, resolve));
  }

  async until(count: number): Promise<void> {
    while (this.arrived.size < count) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  stop(): void {
    this.child.disconnect();
  }
}
