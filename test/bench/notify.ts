import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import type { AssembledContext } from '../../cloud/context.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { completeEntry } from '../../cloud/rules/journal/journal.js';
import { subscribe } from '../../cloud/rules/push-subscriptions/subscriptions.js';
import { insertEntries, journalBarrier, keyHolder } from '../support/barrier-journal.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import {
  type CallSpec,
  Client,
  combined,
  type Figures,
  formatFigures,
  measure,
  percentile,
  ROUNDS,
} from './measure.js';
import { type DeviceProcess, setUp, startController, type World } from './open.js';
import { PushSink, plainRate, readyPushes } from './push-sink-process.js';

/**
 * `npm run bench -- notify` (docs/design.md section 10.6): Web Push of journal entries to a push service on
 * loopback (push-sink.ts, in a process of its own, checking each VAPID JWT and decrypting each RFC 8291 payload
 * as a browser's vendor would). Measured in one run: notifications delivered per second by the cloud's running
 * push delivery beside that service's own rate from a plain keep-alive client, the delay from the commit of an
 * entry's outcome to its push's arrival once the delivery is idle, and `open` on a barrier with push subscribers
 * against one without. Targets: at least 500 notifications a second, p50 delay under 50 ms, open p50 within
 * 1.05x.
 */
const PEOPLE = 5;
const BROWSERS_EACH = 10;
/** Entries told to PEOPLE x BROWSERS_EACH browsers: 10,000 pushes. */
const ENTRIES = 200;
const PLAIN_PUSHES = 10_000;
/** The delivery's own concurrency, so that the baseline is as parallel as the delivery. */
const PLAIN_CONNECTIONS = 16;
const IDLE_SAMPLES = 200;
/** Longer than a look at the outbox takes: each sample finds the delivery idle. */
const IDLE_PAUSE_MS = 50;
/** The browsers of a household of a few people, each told of every opening. */
const OPEN_SUBSCRIBERS = 8;

export async function benchNotify(label: string, serverUrl: string | undefined): Promise<void> {
  const database = await createTestDatabase(serverUrl);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  let cloud: RunningCloud | undefined;
  let sink: PushSink | undefined;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir, { GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1' }),
      database,
      jobs: false,
      eventDelivery: false,
      mailDelivery: false,
    });
    sink = await PushSink.start(cloud.ctx.vapid.publicKey);
    console.log(
      `\n## notify on ${label} (push service in its own process, VAPID checked, payloads decrypted)`,
    );
    await throughput(cloud.ctx, sink);
    await idleDelay(cloud.ctx, sink);
    await openBeside(cloud, sink, dataDir);
  } finally {
    await cloud?.stop();
    await database.close();
    sink?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** PEOPLE people of one barrier, BROWSERS_EACH browsers each; the entries are written in one statement. */
async function throughput(ctx: AssembledContext, sink: PushSink): Promise<void> {
  const owner = await createCustomer(ctx, { displayName: 'Bench owner' });
  const barrier = await journalBarrier(ctx, owner.id, 'Bench gate');
  const holder = await keyHolder(ctx, { customerId: owner.id, barrier, name: 'Bench Couriers' });
  const subscriptions = [];
  for (let person = 0; person < PEOPLE; person++) {
    const customerId = person === 0 ? owner.id : await memberOf(ctx, barrier.deviceId, owner.id);
    subscriptions.push(...(await browsersOf(ctx, sink, customerId, BROWSERS_EACH)));
  }
  const pushes = readyPushes(subscriptions, ctx.vapid, PLAIN_PUSHES / 2);
  const plain = await plainRate(sink.origin, [...pushes, ...pushes], PLAIN_CONNECTIONS);
  console.log(
    `push service alone, plain client    ${plain.toFixed(0)}/s  (${PLAIN_CONNECTIONS} connections, keep-alive)`,
  );

  const expected = ENTRIES * subscriptions.length;
  sink.clear();
  const started = performance.now();
  await insertEntries(
    ctx,
    barrier,
    Array.from({ length: ENTRIES }, () => ({ holder })),
  );
  const all = await sink.until(expected, 120_000);
  const rate = sink.arrived / ((performance.now() - started) / 1000);
  console.log(
    `delivered by the push delivery      ${rate.toFixed(0)}/s  (${ENTRIES} entries x ${subscriptions.length} browsers${all ? '' : `, only ${sink.arrived} of ${expected} in 120 s`}, target >= 500/s)`,
  );
  console.log(`ratio: delivered / service alone    ${(rate / plain).toFixed(2)}`);
}

/** Entries completed one at a time, each after the last one's push arrived and a pause: an idle delivery. */
async function idleDelay(ctx: AssembledContext, sink: PushSink): Promise<void> {
  const owner = await createCustomer(ctx, { displayName: 'Idle owner' });
  const barrier = await journalBarrier(ctx, owner.id, 'Idle gate');
  const holder = await keyHolder(ctx, { customerId: owner.id, barrier, name: 'Idle Couriers' });
  await browsersOf(ctx, sink, owner.id, 1);
  const delays: number[] = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    const [id] = await insertEntries(ctx, barrier, [{ holder, outcome: 'pending' }]);
    const now = ctx.clock.now();
    await completeEntry(ctx.db, { id: id! }, { outcome: 'opened', detail: null, ackedAt: now, now });
    const committed = performance.timeOrigin + performance.now();
    delays.push((await sink.arrival(id!)) - committed);
    await new Promise((resolve) => setTimeout(resolve, IDLE_PAUSE_MS));
  }
  const sorted = delays.sort((a, b) => a - b);
  console.log(
    `commit to arrival, idle delivery    p50 ${percentile(sorted, 0.5).toFixed(2)} ms  p99 ${percentile(sorted, 0.99).toFixed(2)} ms  (${IDLE_SAMPLES} entries one at a time, target p50 < 50 ms)`,
  );
}

/**
 * `open` one call at a time on two barriers alike, in turns, each with its controller in its own process
 * (open.ts): one whose owner has OPEN_SUBSCRIBERS browsers, told of every opening while the run goes on, and one
 * whose owner has none.
 */
async function openBeside(cloud: RunningCloud, sink: PushSink, dataDir: string): Promise<void> {
  const { ctx } = cloud;
  const controllers: DeviceProcess[] = [];
  const api = new Client(cloud.baseUrl);
  try {
    const [quiet, told] = [await world(cloud, dataDir, 'quiet'), await world(cloud, dataDir, 'told')];
    for (const each of [quiet, told]) {
      controllers.push(await startController(ctx, each.configPath, each.deviceId));
    }
    const owner = await ctx.db
      .selectFrom('devices')
      .select('customer_id')
      .where('id', '=', told.deviceId)
      .executeTakeFirstOrThrow();
    await browsersOf(ctx, sink, owner.customer_id!, OPEN_SUBSCRIBERS);
    const runs: Record<'quiet' | 'told', Figures[]> = { quiet: [], told: [] };
    const [openQuiet, openTold] = [opener(quiet), opener(told)];
    for (let round = 0; round < ROUNDS; round++) {
      const options = {
        count: 1000 / ROUNDS,
        connections: 1,
        seconds: 20 / ROUNDS,
        warmup: round === 0 ? 50 : 5,
      };
      runs.quiet.push(await measure(api, openQuiet, options));
      runs.told.push(await measure(api, openTold, options));
    }
    const [without, withPushes] = [combined(runs.quiet), combined(runs.told)];
    console.log('open, sequential:');
    console.log(formatFigures('open, no push subscribers', without));
    console.log(formatFigures(`open, ${OPEN_SUBSCRIBERS} push subscribers`, withPushes));
    console.log(
      `push subscribers: open p50 with / without ${(withPushes.p50 / without.p50).toFixed(2)}x (target <= 1.05x)  p99 ${(withPushes.p99 / without.p99).toFixed(2)}x`,
    );
    console.log(await pushesOfOpenings(ctx, sink, told.deviceId));
  } finally {
    await api.close();
    for (const controller of controllers) await controller.stop();
  }
}

/** A barrier as open.ts makes it, in a folder of its own so that two of them do not share a controller's files. */
async function world(cloud: RunningCloud, dataDir: string, name: string): Promise<World> {
  const dir = join(dataDir, name);
  mkdirSync(dir, { recursive: true });
  return setUp(cloud, dir, { sensors: false });
}

function opener(at: World): (connection: number) => CallSpec {
  let call = 0;
  return (connection) => ({
    path: '/api/company.php?a=open',
    headers: {},
    body: JSON.stringify({
      ...at.company,
      key_ref: at.keyRefs[call++ % at.keyRefs.length],
      number_id: at.numberIds[connection % at.numberIds.length],
      actor: 'Bench driver',
    }),
  });
}

/** That the told barrier's openings were told: its pushes that arrived, once the delivery caught up. */
async function pushesOfOpenings(ctx: AssembledContext, sink: PushSink, deviceId: string): Promise<string> {
  const rows = await ctx.db.selectFrom('journal').select('id').where('device_id', '=', deviceId).execute();
  const entries = rows.map((row) => row.id);
  const expected = entries.length * OPEN_SUBSCRIBERS;
  for (let i = 0; i < 200 && sink.arrivedOf(entries) < expected; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return `pushes of those openings arrived: ${sink.arrivedOf(entries)} of ${expected}`;
}

async function memberOf(ctx: AssembledContext, deviceId: string, ownerId: number): Promise<number> {
  const member = await createCustomer(ctx, { displayName: 'Bench member' });
  await ctx.db
    .insertInto('barrier_members')
    .values({
      device_id: deviceId,
      customer_id: member.id,
      may_grant: false,
      added_by: ownerId,
      joined_at: ctx.clock.now(),
    })
    .execute();
  return member.id;
}

/** `count` browsers of the customer, subscribed as the account page does it, with the push service's keys. */
async function browsersOf(ctx: AssembledContext, sink: PushSink, customerId: number, count: number) {
  const subscriptions = await sink.subscribe(count);
  for (const subscription of subscriptions) {
    await subscribe(ctx, {
      customerId,
      subscription,
      userAgent: 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0',
    });
  }
  return subscriptions;
}
