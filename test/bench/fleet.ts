import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { startBaseline } from './baseline.js';
import { printBreakdown } from './breakdowns.js';
import { LoadProcesses, startControllerProcesses, stopControllerProcesses } from './fleet-processes.js';
import { buildFleet, type Fleet } from './fleet-world.js';
import { startFloor } from './floor.js';
import { type CallSpec, Client, type Figures, figuresOf, formatFigures, measure } from './measure.js';
import { MqttRoundTrip } from './mqtt-baseline.js';
import { RoundTrips } from './round-trips.js';

/**
 * `npm run bench -- fleet` (docs/design.md section 5.1): 100 controllers running the compiled controller runtime
 * in 4 processes, 10 keys on each barrier (1,000 keys, each at the default limit of 10 openings a minute), and
 * openings sent at fixed rates from 4 client processes. Reports the highest rate whose p99 stays under 25 ms,
 * open's p50 beside its floor (floor.ts: the same commits, durable writes and signatures done bare, sent at the
 * same rate) and beside the bare baselines. Targets on PostgreSQL: 1,000 opens/s at p99 under 25 ms; open p50
 * within 1.25x of the floor's.
 */
const SIZE = { controllers: 100, objectsPerController: 4, keysPerController: 10 };
const CONTROLLER_PROCESSES = 4;
const CLIENT_PROCESSES = 4;
/**
 * Rates tried, each for STEP_SECONDS: with the warm-up and the sequential figures, about 7,900 openings in all,
 * under 8 per key, so no key reaches its limit of 10 a minute and every answer must be 200.
 */
const RATES = process.env.BENCH_FLEET_RATES
  ? process.env.BENCH_FLEET_RATES.split(',').map(Number)
  : [400, 700, 1000, 1300, 1600];
const STEP_SECONDS = 1.5;
const P99_TARGET_MS = 25;

export async function benchFleet(serverUrl: string | undefined): Promise<void> {
  if (!serverUrl) {
    console.log('\n(fleet: PostgreSQL is not reachable; its targets are for PostgreSQL, so it is skipped)');
    return;
  }
  const database = await createTestDatabase(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-fleet-'));
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const trips = new RoundTrips();
    const cloud = await startCloud({
      config: localCloudConfig(dir),
      database: trips.timed(database),
      jobs: false,
    });
    cleanup.unshift(() => cloud.stop());
    console.log(
      `\n## fleet on PostgreSQL: ${SIZE.controllers} controllers, ${SIZE.controllers * SIZE.keysPerController} keys`,
    );
    process.stdout.write('provisioning, pairing and granting keys:');
    const fleet = await buildFleet(cloud, dir, SIZE);
    process.stdout.write('\nstarting the controllers...');
    const controllers = await startControllerProcesses(
      fleet.barriers.map((barrier) => barrier.configPath),
      CONTROLLER_PROCESSES,
    );
    cleanup.unshift(() => stopControllerProcesses(controllers));
    await allOnline(cloud, fleet);
    console.log(` ${SIZE.controllers} online`);

    const floor = await startFloor(database.db, dir);
    cleanup.unshift(() => floor.close());
    const baseline = await startBaseline(database.db);
    cleanup.unshift(() => baseline.close());
    const mqtt = await MqttRoundTrip.start();
    cleanup.unshift(() => mqtt.close());
    const load = await LoadProcesses.start(CLIENT_PROCESSES);
    cleanup.unshift(() => load.stop());
    const clients = [new Client(cloud.baseUrl), new Client(floor.url), new Client(baseline.url)] as const;
    cleanup.unshift(() => Promise.all(clients.map((client) => client.close())));

    const openings = new Openings(fleet);
    const cloudPort = Number(new URL(cloud.baseUrl).port);
    const floorPort = Number(new URL(floor.url).port);
    await load.run(cloudPort, 100, split(openings.take(200), load.count));

    console.log('one call at a time:');
    const seq = { count: 200, connections: 1, warmup: 20 };
    const open = await measure(clients[0], () => openings.take(1)[0]!, seq);
    const atFloor = await measure(clients[1], floorCall, seq);
    const insert = await measure(clients[2], () => ({ path: '/baseline', headers: {}, body: '{}' }), seq);
    const roundTrip = await mqtt.measure({ count: 200, connections: 1, warmup: 20 });
    console.log(formatFigures('baseline: MQTT request + reply', roundTrip));
    console.log(formatFigures('baseline: Fastify + 1 insert', insert));
    console.log(formatFigures('floor: the same guarantees, bare', atFloor));
    console.log(formatFigures('open (200, acknowledged)', open));
    console.log(`open p50 / floor p50 ${(open.p50 / atFloor.p50).toFixed(2)}x (target <= 1.25x)`);

    console.log(
      `fixed rates from ${load.count} client processes, ${STEP_SECONDS} s each (target: 1,000/s at p99 < ${P99_TARGET_MS} ms):`,
    );
    let best = 0;
    for (const rate of RATES) {
      const count = Math.round(rate * STEP_SECONDS);
      const ours = await atRate(load, cloudPort, rate, openings.take(count));
      const bare = await atRate(load, floorPort, rate, Array.from({ length: count }, floorCall));
      console.log(formatFigures(`open at ${rate}/s`, ours.figures) + refusals(ours.refused));
      console.log(formatFigures(`floor at ${rate}/s`, bare.figures));
      console.log(
        `  open p50 / floor p50 ${(ours.figures.p50 / bare.figures.p50).toFixed(2)}x (target <= 1.25x)`,
      );
      if (ours.figures.p99 < P99_TARGET_MS && Object.keys(ours.refused).length === 0) best = rate;
    }
    console.log(
      `highest rate with p99 under ${P99_TARGET_MS} ms: ${best ? `${best}/s` : 'none tried'} (target >= 1000/s)`,
    );
    const profiledRate = RATES[Math.floor(RATES.length / 2)]!;
    await printBreakdown(
      `open at ${profiledRate}/s`,
      trips,
      async () =>
        (await atRate(load, cloudPort, profiledRate, openings.take(Math.round(profiledRate * STEP_SECONDS))))
          .figures,
      0,
    );
  } finally {
    for (const step of cleanup) await step().catch(() => {});
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const floorCall = (): CallSpec => ({ path: '/floor', headers: {}, body: '{"actor":"Bench driver"}' });

/**
 * Openings over the whole fleet in an order that keeps each object's calls far apart (a controller runs one
 * operation per object at a time): call j goes to object j mod 400, the barriers interleaved, with the barrier's
 * keys taken in turn.
 */
class Openings {
  readonly #fleet: Fleet;
  #next = 0;

  constructor(fleet: Fleet) {
    this.#fleet = fleet;
  }

  take(count: number): CallSpec[] {
    const { barriers, company } = this.#fleet;
    return Array.from({ length: count }, () => {
      const j = this.#next++;
      const barrier = barriers[j % barriers.length]!;
      const object = Math.floor(j / barriers.length) % barrier.numberIds.length;
      const key = Math.floor(j / barriers.length) % barrier.keyRefs.length;
      const body = JSON.stringify({
        ...company,
        key_ref: barrier.keyRefs[key],
        number_id: barrier.numberIds[object],
        actor: 'Fleet driver',
      });
      return { path: '/api/company.php?a=open', headers: {}, body };
    });
  }
}

/** Deals calls to processes in turn, so each process's share keeps the order's spacing. */
function split(calls: CallSpec[], processes: number): CallSpec[][] {
  return Array.from({ length: processes }, (_, p) => calls.filter((_, i) => i % processes === p));
}

async function atRate(
  load: LoadProcesses,
  port: number,
  rate: number,
  calls: CallSpec[],
): Promise<{ figures: Figures; refused: Record<string, number> }> {
  const answers = await load.run(port, rate, split(calls, load.count));
  const refused: Record<string, number> = {};
  for (const answer of answers) {
    for (const [status, n] of Object.entries(answer.refused)) refused[status] = (refused[status] ?? 0) + n;
  }
  const seconds = Math.max(...answers.map((answer) => answer.seconds));
  return {
    figures: figuresOf(
      answers.flatMap((answer) => answer.latencies),
      seconds,
    ),
    refused,
  };
}

function refusals(refused: Record<string, number>): string {
  const said = Object.entries(refused).map(([status, n]) => `${n}x ${status}`);
  return said.length ? `  refused: ${said.join(', ')}` : '';
}

async function allOnline(cloud: RunningCloud, fleet: Fleet): Promise<void> {
  const ids = fleet.barriers.map((barrier) => barrier.deviceId);
  for (let i = 0; i < 600; i++) {
    const online = await cloud.ctx.db
      .selectFrom('devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('id', 'in', ids)
      .where('online', '=', true)
      .executeTakeFirstOrThrow();
    if (Number(online.n) === ids.length) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the fleet did not come online within 60 s');
}
