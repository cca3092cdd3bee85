import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import type { AssembledContext } from '../../cloud/context.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { approveCompany, createCompany } from '../../cloud/rules/companies/companies.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { createDevice, pairDevice } from '../../cloud/rules/devices/devices.js';
import { REPORT_HOLD_MAX_MS, REPORT_LINGER_MS } from '../../cloud/rules/positions/position-reports.js';
import { provision } from '../../device/cli/provision.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { startBaseline } from './baseline.js';
import { printBreakdown } from './breakdowns.js';
import { formatDifference } from './cpu-breakdown.js';
import { grantKey } from './fleet-world.js';
import { type Floor, startFloor } from './floor.js';
import { type CallSpec, Client, combined, type Figures, formatFigures, measure, ROUNDS } from './measure.js';
import { MqttRoundTrip } from './mqtt-baseline.js';
import { postgresCpuMs, processCpuMs } from './process-cpu.js';
import { RoundTrips } from './round-trips.js';

/**
 * `open` end to end (issue target: p50 at most 3x the transport and the database it needs, that is a raw MQTT
 * request and reply plus a bare Fastify route doing one insert). The controller is the real `gatelink-device
 * run` with simulated outputs that pulse for 0 ms, in its own process as on a box, so that its work is not
 * on the cloud's event loop. Beside it, the floor (floor.ts): the same guarantees, two commits, one durable
 * write on the controller's side and four Ed25519 operations, done bare, which tells how much of the time
 * is ours and how much any implementation of them pays. `serverUrl` undefined means PGlite, otherwise a
 * PostgreSQL server on which a fresh database is made. A second controller, the same but with a simulated gate
 * sensor on each object that toggles at every opening, measures open with position reports flowing (issue
 * target: p50 within 1.05x of the run without; docs/design.md section 7.5), back to back and, several at once,
 * paced at half the rate the instance carries, and counts the steps the reports attached, so that a fast run is
 * known to have applied them.
 */
const DEVICE_BIN = fileURLToPath(new URL('../../bin/gatelink-device.mjs', import.meta.url));
/** A controller runs one operation per object at a time: concurrent calls each keep to their own object. */
const OBJECTS = 4;
/**
 * Keys taken in turn, each with the default rate limit (10 openings a minute) and so the rolling-minute count
 * of a real key: the run makes about 12,000 openings on the barrier without sensors in about a minute and a
 * half, at most 8 per key in any minute. With fewer keys and a raised limit, every call would count hundreds of
 * attempts that no real key makes.
 */
const KEYS = 1600;
/**
 * Untimed openings before each timed run of `open`, with and without reports: more than REPORT_HOLD_MAX_MS of
 * them, so that reports held back for a pause are applied inside the timed run as they would be under a load
 * that never stops, and none of their cost slips into the gap after it.
 */
const STEADY_WARMUP = 150;
/** Rounds of the comparison of open with reports and without (sensorRuns). */
const SENSOR_ROUNDS = 9;
/**
 * The pause after each run of the comparison: a report's linger on the controller and in the cloud, the quiet
 * moment held reports wait for, and their statements, with room to spare.
 */
const SENSOR_PAUSE_MS = REPORT_HOLD_MAX_MS;
/**
 * The paced comparison's rate, of the openings a second the instance made without reports in the same run: well
 * short of its limit, with and without reports alike (with them it makes 0.8 to 0.9x of that).
 */
const PACED_LOAD = 0.5;
/** How long each paced run lasts, in seconds: several times REPORT_HOLD_MAX_MS, as the unpaced ones. */
const PACED_SECONDS = 3;
/** Openings in each profiled run, after the timed ones: enough that a 0.2 ms sampling interval sees each part. */
const PROFILED = 400;
export async function benchOpen(label: string, serverUrl: string | undefined): Promise<void> {
  const database = await createTestDatabase(serverUrl);
  const trips = new RoundTrips();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  let cloud: RunningCloud | undefined;
  let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
  let controller: DeviceProcess | undefined;
  let sensedController: DeviceProcess | undefined;
  let mqttBaseline: MqttRoundTrip | undefined;
  let floor: Floor | undefined;
  let floorClient: Client | undefined;
  let api: Client | undefined;
  let bare: Client | undefined;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir),
      database: trips.timed(database),
      jobs: false,
    });
    baseline = await startBaseline(database.db);
    console.log(`\n## open on ${label} (simulated outputs, 0 ms pulse, controller in its own process)`);
    const world = await setUp(cloud, dataDir, { sensors: false });
    controller = await startController(cloud.ctx, world.configPath, world.deviceId);
    // The same barrier with a simulated gate sensor on each object: every opening also sends a signed report.
    const sensed = await setUp(cloud, dataDir, { sensors: true });
    sensedController = await startController(cloud.ctx, sensed.configPath, sensed.deviceId);
    mqttBaseline = await MqttRoundTrip.start();
    floor = await startFloor(database.db, dataDir);
    floorClient = new Client(floor.url);

    api = new Client(cloud.baseUrl);
    bare = new Client(baseline.url);
    const opener = (at: World) => {
      let call = 0;
      return (connection: number): CallSpec => {
        const body = JSON.stringify({
          ...at.company,
          key_ref: at.keyRefs[call++ % at.keyRefs.length],
          number_id: at.numberIds[connection % at.numberIds.length],
          actor: 'Bench driver',
        });
        return { path: '/api/company.php?a=open', headers: {}, body };
      };
    };
    const open = opener(world);
    const openSensed = opener(sensed);
    const insert = (): CallSpec => ({ path: '/baseline', headers: {}, body: '{"actor":"Bench driver"}' });
    const floorCall = (): CallSpec => ({ path: '/floor', headers: {}, body: '{"actor":"Bench driver"}' });

    for (const connections of [1, OBJECTS]) {
      const count = (connections === 1 ? 1000 : 250) / ROUNDS;
      const seconds = 20 / ROUNDS;
      const runs: Record<'base' | 'mqtt' | 'floor' | 'ours', Figures[]> = {
        base: [],
        mqtt: [],
        floor: [],
        ours: [],
      };
      for (let round = 0; round < ROUNDS; round++) {
        const warmup = round === 0 ? 50 : 5;
        runs.base.push(await measure(bare, insert, { count: count * 2, connections, seconds, warmup }));
        runs.mqtt.push(await mqttBaseline.measure({ count: count * 2, connections, seconds, warmup }));
        runs.floor.push(await measure(floorClient, floorCall, { count, connections, seconds, warmup }));
        runs.ours.push(await measure(api, open, { count, connections, seconds, warmup }));
      }
      const upkeep = () => vacuumed(cloud!.ctx);
      const pids = [controller.pid, sensedController.pid];
      const cpu = () => cpuByPart(pids, serverUrl);
      const sensing = await sensorRuns(api, { open, openSensed, connections, cpu }, upkeep);
      const sensedFigures = combined(sensing.sensed);
      // Several at once, the same comparison again at a fixed rate the instance carries (PACED_LOAD of what it
      // made without reports), where a report's work has spare cores to go to, as on a cloud not at its limit.
      const rate = PACED_LOAD * combined([...sensing.ours, ...sensing.again]).perSecond;
      const paced =
        connections > 1
          ? await sensorRuns(api, { open, openSensed, connections, perSecond: rate, cpu }, upkeep)
          : null;
      const [base, mqtt, ours] = [combined(runs.base), combined(runs.mqtt), combined(runs.ours)];
      const atFloor = combined(runs.floor);
      console.log(connections === 1 ? 'sequential:' : `connections: ${connections} (one object each)`);
      console.log(formatFigures('baseline: MQTT request + reply', mqtt));
      console.log(formatFigures('baseline: Fastify + 1 insert', base));
      console.log(formatFigures('open (200, acknowledged)', ours));
      console.log(formatFigures('floor: the same guarantees, bare', atFloor));
      console.log(formatFigures('open with sensor reports flowing', sensedFigures));
      console.log(ratioLine(ours, mqtt, base));
      console.log(sensorLine(sensing));
      console.log(cpuLine(sensing));
      if (paced) {
        console.log(sensorLine(paced, `paced at ${rate.toFixed(0)} openings/s`));
        console.log(cpuLine(paced));
      }
      console.log(
        `beside the floor: open p50 / floor p50 ${(ours.p50 / atFloor.p50).toFixed(2)}x, floor p50 / (mqtt p50 + fastify p50) ${(atFloor.p50 / (mqtt.p50 + base.p50)).toFixed(2)}x`,
      );
      const steady = { count: PROFILED / connections, connections, seconds: 30, warmup: STEADY_WARMUP };
      const plain = await printBreakdown('open', trips, () => measure(api!, open, steady), STEADY_WARMUP);
      const withReports = await printBreakdown(
        'open with reports flowing',
        trips,
        () => measure(api!, openSensed, steady),
        STEADY_WARMUP,
      );
      console.log(formatDifference('what reports add to one opening', plain, withReports));
    }
    console.log(await stepsSeen(cloud.ctx, sensed.deviceId));
  } finally {
    await api?.close();
    await floorClient?.close();
    await floor?.close();
    await bare?.close();
    await mqttBaseline?.close();
    await controller?.stop();
    await sensedController?.stop();
    await baseline?.close();
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * What the reports did, so that a fast run is known to have applied them: every opening of the toggling gates
 * moves its gate, so about half of them are seen open, and each of those is seen closed by the next.
 */
async function stepsSeen(ctx: AssembledContext, deviceId: string): Promise<string> {
  // The last reports wait for others on the controller and in the cloud (REPORT_LINGER_MS each) to travel in one
  // message and be applied in one statement, and in the cloud for a pause in the openings.
  await new Promise((resolve) => setTimeout(resolve, 5 * REPORT_LINGER_MS + REPORT_HOLD_MAX_MS));
  const row = await ctx.db
    .selectFrom('journal')
    .select((eb) => [
      eb.fn.countAll<string>().as('openings'),
      eb.fn.count<string>('gate_opened_at').as('opened'),
      eb.fn.count<string>('gate_closed_at').as('closed'),
    ])
    .where('device_id', '=', deviceId)
    .where('outcome', '=', 'opened')
    .executeTakeFirstOrThrow();
  const { rows } = await sql<{ relname: string; upd: string; hot: string }>`
    select relname, n_tup_upd::text as upd, n_tup_hot_upd::text as hot from pg_stat_user_tables
     where relname in ('journal', 'device_objects', 'events') order by relname`.execute(ctx.db);
  const updates = rows.map((each) => `${each.relname} ${each.upd} (${each.hot} in place)`).join(', ');
  return `sensor reports applied: of ${row.openings} openings, ${row.opened} seen open and ${row.closed} seen closed; rows updated: ${updates}`;
}

/**
 * The database vacuumed and analyzed, as the server's autovacuum would at some moment of its own; how long it
 * took, in ms.
 */
async function vacuumed(ctx: AssembledContext): Promise<number> {
  const started = performance.now();
  await sql`vacuum analyze`.execute(ctx.db);
  return performance.now() - started;
}

interface SensorRuns {
  ours: Figures[];
  sensed: Figures[];
  again: Figures[];
  /** How long the pause's vacuum took after each run with reports, and after each without, in ms. */
  upkeep: { sensed: number[]; plain: number[] };
  /** CPU used by each part over the runs with reports and over those without, pauses included, in ms. */
  cpu: { sensed: CpuByPart; plain: CpuByPart };
  /** The openings those runs made, their warm-up included. */
  calls: { sensed: number; plain: number };
}

/** CPU time, in ms, of the parts that share the machine's cores; the database is null where it is not ours to read. */
interface CpuByPart {
  cloud: number;
  database: number | null;
  controllers: number;
}

/**
 * CPU used so far by the cloud (this process, with the broker and, on PGlite, the database; its thread pool
 * included), by a PostgreSQL server on this machine, and by the controllers. The load client is left out: it
 * makes the same calls with reports and without.
 */
function cpuByPart(controllers: number[], serverUrl: string | undefined): CpuByPart {
  const usage = process.cpuUsage();
  const local =
    serverUrl !== undefined && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(serverUrl).hostname);
  return {
    cloud: (usage.user + usage.system) / 1000,
    database: local ? postgresCpuMs() : null,
    controllers: controllers.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0),
  };
}

function addCpu(total: CpuByPart, before: CpuByPart, after: CpuByPart): void {
  total.cloud += after.cloud - before.cloud;
  total.controllers += after.controllers - before.controllers;
  total.database =
    total.database === null || before.database === null || after.database === null
      ? null
      : total.database + after.database - before.database;
}

/**
 * Open with reports flowing beside open without, in SENSOR_ROUNDS rounds of without, with and without again.
 * Each timed run lasts about three seconds, several times REPORT_HOLD_MAX_MS, so that the reports a run with
 * them holds back are applied inside it, as under a load that never stops, a few times over; and each run is
 * followed by a pause longer than a report's linger and the quiet moment reports wait for, in which the held
 * ones are applied, so that none of a run's reports is applied inside the next run (a shorter run, or none,
 * moved up to a second of them into the run without reports after it). The pause ends with the database
 * vacuumed (`upkeep`): on PostgreSQL, autovacuum woken by a run's 16,000 row versions otherwise fell at random
 * into one run or the next, and two runs without reports differed by up to 1.3x; vacuumed in the pauses, every
 * run starts from the same state, and what reports add to the upkeep is printed beside the ratio instead.
 */
async function sensorRuns(
  api: Client,
  calls: {
    open: (connection: number) => CallSpec;
    openSensed: (connection: number) => CallSpec;
    connections: number;
    /** Paced at this many openings a second, all connections together; otherwise back to back. */
    perSecond?: number;
    cpu: () => CpuByPart;
  },
  upkeep: () => Promise<number>,
): Promise<SensorRuns> {
  const zero = (): CpuByPart => ({ cloud: 0, database: 0, controllers: 0 });
  const runs: SensorRuns = {
    ours: [],
    sensed: [],
    again: [],
    upkeep: { sensed: [], plain: [] },
    cpu: { sensed: zero(), plain: zero() },
    calls: { sensed: 0, plain: 0 },
  };
  const { connections, perSecond } = calls;
  const options =
    perSecond === undefined
      ? { count: connections === 1 ? 900 : 250, connections, seconds: 10, warmup: 50 }
      : {
          count: Math.ceil((PACED_SECONDS * perSecond) / connections),
          connections,
          seconds: 2 * PACED_SECONDS,
          warmup: 50,
          intervalMs: (1000 * connections) / perSecond,
        };
  // A run and its pause, in which the reports it held are applied; the vacuum after it is counted apart.
  const timed = async (spec: (connection: number) => CallSpec, sensed: boolean) => {
    const before = calls.cpu();
    const figures = await measure(api, spec, options);
    await new Promise((resolve) => setTimeout(resolve, SENSOR_PAUSE_MS));
    addCpu(sensed ? runs.cpu.sensed : runs.cpu.plain, before, calls.cpu());
    runs.calls[sensed ? 'sensed' : 'plain'] += figures.count + options.warmup;
    (sensed ? runs.upkeep.sensed : runs.upkeep.plain).push(await upkeep());
    return figures;
  };
  await upkeep();
  for (let round = 0; round < SENSOR_ROUNDS; round++) {
    runs.ours.push(await timed(calls.open, false));
    runs.sensed.push(await timed(calls.openSensed, true));
    runs.again.push(await timed(calls.open, false));
  }
  return runs;
}

/**
 * Open with reports beside open without, measured before and after it in each round: the p50 of all rounds
 * together, and the median of each round's ratio, which a slow stretch of the machine moves less since the runs
 * of a round share it. Beside them the two runs without reports compared with each other: the machine's own
 * noise, against which the target's 5% is to be read.
 */
function sensorLine(runs: SensorRuns, label = 'sensor reports'): string {
  const without = combined([...runs.ours, ...runs.again]);
  const sensed = combined(runs.sensed);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const perRound = median(
    runs.sensed.map((run, i) => run.p50 / combined([runs.ours[i]!, runs.again[i]!]).p50),
  );
  const noise = median(runs.again.map((run, i) => run.p50 / runs.ours[i]!.p50));
  return [
    `${label}: open p50 with / without ${(sensed.p50 / without.p50).toFixed(2)}x (target <= 1.05x),`,
    `median of rounds ${perRound.toFixed(2)}x; p99 ${(sensed.p99 / without.p99).toFixed(2)}x;`,
    `openings/s ${(sensed.perSecond / without.perSecond).toFixed(2)}x; noise: without, after / before ${noise.toFixed(2)}x;`,
    `the pause's vacuum after a run with reports ${median(runs.upkeep.sensed).toFixed(0)} ms, without ${median(runs.upkeep.plain).toFixed(0)} ms (medians)`,
  ].join(' ');
}

/**
 * What reports add to an opening in CPU, by the part that spends it (cloud, database, controllers), over the
 * runs and their pauses: on this machine they share the cores with the openings, so it is this that the p50
 * ratio pays for. A controller's share is spent on its own box in a real installation.
 */
function cpuLine(runs: SensorRuns): string {
  const part = (name: keyof CpuByPart) => {
    const withReports = runs.cpu.sensed[name];
    const without = runs.cpu.plain[name];
    if (withReports === null || without === null) return `${name} in the cloud's or not on this machine`;
    const [a, b] = [withReports / runs.calls.sensed, without / runs.calls.plain];
    return `${name} ${a.toFixed(2)} against ${b.toFixed(2)} (+${(a - b).toFixed(2)})`;
  };
  return `  CPU per opening, ms, with reports against without: ${part('cloud')}, ${part('database')}, ${part('controllers')}`;
}

function ratioLine(ours: Figures, mqtt: Figures, base: Figures): string {
  const p50 = ours.p50 / (mqtt.p50 + base.p50);
  const p99 = ours.p99 / (mqtt.p99 + base.p99);
  return `ratio: open p50 / (mqtt p50 + fastify p50) ${p50.toFixed(2)}x (target <= 3x)  p99 ${p99.toFixed(2)}x  opens ${ours.perSecond.toFixed(0)}/s`;
}

export interface World {
  configPath: string;
  deviceId: string;
  numberIds: number[];
  keyRefs: number[];
  company: { org_id: number; secret: string };
}

/**
 * A customer with a controller provisioned the way an installer does it (`provision()` against the cloud's
 * HTTP API, its own key pair), paired; a company with a secret, and KEYS keys on all the objects.
 */
export async function setUp(
  cloud: RunningCloud,
  dataDir: string,
  options: { sensors: boolean },
): Promise<World> {
  const { ctx } = cloud;
  const name = options.sensors ? 'sensed' : 'device';
  const customer = await createCustomer(ctx, { displayName: 'Bench customer' });
  const created = await createDevice(ctx, {
    label: `Bench barrier${options.sensors ? ' with sensors' : ''}`,
  });
  const objectsPath = join(dataDir, `${name}-objects.yaml`);
  // A toggling gate seen open at once: each opening moves it, so each sends one report, the most there can be.
  const sensor = options.sensors
    ? '    sensor:\n      type: simulated\n      mode: toggle\n      open_after_ms: 0\n'
    : '';
  const objects = Array.from(
    { length: OBJECTS },
    (_, i) =>
      `  - id: gate${i + 1}\n    label: Gate ${i + 1}\n    kind: simulated\n    pulse_ms: 0\n${sensor}`,
  );
  writeFileSync(
    objectsPath,
    `objects:\n${objects.join('')}clock:\n  check: none\ntelemetry:\n  interval_s: 3600\n`,
  );
  const configPath = join(dataDir, name, 'device.yaml');
  const { response } = await provision({
    cloud: cloud.baseUrl.replace('localhost', '127.0.0.1'),
    code: created.provisioning_code,
    configPath,
    objectsFrom: objectsPath,
  });
  const barrier = await pairDevice(ctx, { customerId: customer.id, pairingCode: response.pairing_code! });
  const numberIds = barrier.objects.map((object) => object.number_id);

  const company = await createCompany(ctx, { name: 'Bench Opening Ltd' });
  await approveCompany(ctx, company.id);
  const { secret } = await issueSecret(ctx, company.id);
  const keyRefs: number[] = [];
  for (let i = 0; i < KEYS; i++) {
    keyRefs.push(
      await grantKey(ctx, {
        companyId: company.id,
        customerId: customer.id,
        deviceId: created.device_id,
        objectIds: numberIds,
        ref: `OPEN-${i}`,
      }),
    );
  }
  return {
    configPath,
    deviceId: created.device_id,
    numberIds,
    keyRefs,
    company: { org_id: company.id, secret },
  };
}

export interface DeviceProcess {
  readonly pid: number;
  stop(): Promise<void>;
}

/** `gatelink-device run`, until the cloud has the controller online (at most 30 s). */
export async function startController(
  ctx: AssembledContext,
  configPath: string,
  deviceId: string,
): Promise<DeviceProcess> {
  // The daemon logs every command to stdout, dropped here; its stderr explains a failure to start.
  const child: ChildProcess = spawn(process.execPath, [DEVICE_BIN, 'run', '--config', configPath], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const errors: Buffer[] = [];
  child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
  };
  process.stdout.write('starting the controller...');
  for (let i = 0; i < 300 && !exited; i++) {
    const row = await ctx.db
      .selectFrom('devices')
      .select('online')
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (row?.online) {
      console.log(' online');
      return { pid: child.pid!, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  const said = Buffer.concat(errors).toString('utf8').slice(-2000);
  throw new Error(`the controller did not come online within 30 s${said ? `: ${said}` : ''}`);
}
