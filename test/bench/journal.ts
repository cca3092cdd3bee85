import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import type { AssembledContext } from '../../cloud/context.js';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { PAGE_SIZE } from '../../cloud/rules/journal/barrier-journal.js';
import { journalBarrier, keyHolder } from '../support/barrier-journal.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { printBreakdown } from './breakdowns.js';
import { formatDifference } from './cpu-breakdown.js';
import { type CallSpec, Client, combined, type Figures, measure, percentile, ROUNDS } from './measure.js';
import { collector, settledMemory } from './memory.js';
import { RoundTrips } from './round-trips.js';

/**
 * A barrier's journal as its customer reads it (docs/design.md section 10.5), with 1,000,000 entries on one
 * customer's barrier (issue target: a journal page within 3x of a bare Fastify route answering a page of the
 * same size, at p50 on PostgreSQL; the CSV export's memory flat). Measured in turns in the same run: the bare
 * route, the newest page, a page near the oldest entry (`before=`), a page filtered by an outcome no entry has
 * (the outcome index's worst case, docs/design.md section 10.5), and the export of the 100,000 refusals
 * (one entry in ten), whose memory is sampled in this process, which serves it; the calls come from a process
 * of their own (measure.ts). The export of all 1,000,000 entries follows, to show that memory does not grow
 * with the export's length. `serverUrl` undefined means PGlite, otherwise a fresh database on that server.
 */
const ENTRIES = 1_000_000;
/** Every tenth entry is a refusal for too many openings: the export filtered by that outcome has 100,000. */
const REFUSED_EVERY = 10;
const CALLS_PER_PAGE = 1000;
const EXPORTS = 5;

export async function benchJournal(serverUrl: string | undefined): Promise<void> {
  const label = serverUrl ? 'PostgreSQL' : 'PGlite';
  const database = await createTestDatabase(serverUrl);
  const trips = new RoundTrips();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  const gc = collector();
  let cloud: RunningCloud | undefined;
  let bare: Awaited<ReturnType<typeof startPageBaseline>> | undefined;
  let api: Client | undefined;
  let baseClient: Client | undefined;
  try {
    cloud = await startCloud({
      config: localCloudConfig(dataDir),
      database: trips.timed(database),
      jobs: false,
    });
    console.log(`\n## the journal a customer sees, on ${label}, ${ENTRIES.toLocaleString('en')} entries`);
    const started = Date.now();
    const world = await fill(cloud.ctx);
    console.log(`(entries written and analysed in ${((Date.now() - started) / 1000).toFixed(1)} s)`);

    const origin = cloud.baseUrl.replace('localhost', '127.0.0.1');
    const headers = await browserHeaders(cloud.ctx, origin, world.customerId);
    const journal = `/barriers/${world.deviceId}/journal`;
    const paths = {
      first: journal,
      deep: `${journal}?before=${world.oldestId + PAGE_SIZE + 1}`,
      // An outcome no entry has: the worst case of the outcome filter, which migration 0005's index serves.
      rare: `${journal}?outcome=device_error`,
      csv: `${journal}.csv?outcome=rate_limit`,
      all: `${journal}.csv`,
    };
    const firstPage = await answer(origin, paths.first, headers);
    const deepPage = await answer(origin, paths.deep, headers);
    for (const page of [firstPage, deepPage]) {
      const shown = page.text.match(/<li class="entry"/g)?.length ?? 0;
      if (shown !== PAGE_SIZE) throw new Error(`a journal page showed ${shown} entries, not ${PAGE_SIZE}`);
    }
    bare = await startPageBaseline(firstPage.text);
    baseClient = new Client(bare.url);
    api = new Client(cloud.baseUrl);

    const get =
      (path: string): (() => CallSpec) =>
      () => ({ method: 'GET', path, headers, body: '' });
    const runs: Record<'base' | 'floor' | 'first' | 'deep' | 'rare', Figures[]> = {
      base: [],
      floor: [],
      first: [],
      deep: [],
      rare: [],
    };
    const count = CALLS_PER_PAGE / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      const warmup = round === 0 ? 50 : 5;
      runs.base.push(await measure(baseClient, get('/page'), { count, connections: 1, warmup }));
      runs.floor.push(await measure(api, get('/offline'), { count, connections: 1, warmup }));
      runs.first.push(await measure(api, get(paths.first), { count, connections: 1, warmup }));
      runs.deep.push(await measure(api, get(paths.deep), { count, connections: 1, warmup }));
      runs.rare.push(await measure(api, get(paths.rare), { count, connections: 1, warmup }));
    }
    const [base, floor] = [combined(runs.base), combined(runs.floor)];
    const [first, deep, rare] = [combined(runs.first), combined(runs.deep), combined(runs.rare)];
    console.log(
      `pages of ${PAGE_SIZE} entries, ${firstPage.bytes.toLocaleString('en')} bytes, one at a time:`,
    );
    console.log(line('baseline: Fastify, the same page', base));
    console.log(line('a signed-in page reading nothing', floor));
    console.log(line('first journal page', first));
    console.log(line(`deep page (before=${world.oldestId + PAGE_SIZE + 1})`, deep));
    console.log(line('outcome no entry has (device_error)', rare));
    for (const [name, figures] of [
      ['signed-in page reading nothing', floor],
      ['first page', first],
      ['deep page', deep],
      ['rare outcome page', rare],
    ] as const) {
      const ratio = figures.p50 / base.p50;
      console.log(
        `ratio ${name} p50 ${ratio.toFixed(2)}x (target <= 3x${serverUrl ? '' : ', on PostgreSQL'}: ${ratio <= 3 ? 'met' : 'NOT met'})  p95 ${(p95(figures) / p95(base)).toFixed(2)}x`,
      );
    }

    const once = { count: count, connections: 1, warmup: 5 };
    const empty = await printBreakdown(
      'a signed-in page reading nothing',
      trips,
      () => measure(api!, get('/offline'), once),
      5,
    );
    const page = await printBreakdown(
      'the first journal page',
      trips,
      () => measure(api!, get(paths.first), once),
      5,
    );
    console.log(formatDifference('what reading and rendering the entries adds', empty, page));

    const refusals = await exportFigures(gc, api, get(paths.csv), EXPORTS, () =>
      countExport(origin, paths.csv, headers),
    );
    console.log(
      exportLine(`CSV export, ${refusals.rows.toLocaleString('en')} rows (outcome filter)`, refusals),
    );
    const all = await exportFigures(gc, api, get(paths.all), 1, () =>
      countExport(origin, paths.all, headers),
    );
    console.log(exportLine(`CSV export, ${all.rows.toLocaleString('en')} rows (the whole journal)`, all));
    // Flat: ten times the rows take no more memory, and what is held live is a batch, not the export.
    const growth = (e: ExportFigures) => e.peakRss - e.before.rss;
    const live = (e: ExportFigures) => e.peakLive - e.before.heapUsed;
    const flat =
      growth(all) <= 1.5 * growth(refusals) + 16 * MIB && Math.max(live(refusals), live(all)) < 16 * MIB;
    console.log(
      `export memory: peak RSS ${signed(growth(refusals))} for ${mib(refusals.bytes)} of CSV, ${signed(growth(all))} for ${mib(all.bytes)}; live heap ${signed(live(refusals))} and ${signed(live(all))} (target: flat, not growing with the export, live under 16 MiB: ${flat ? 'met' : 'NOT met'})`,
    );
  } finally {
    await api?.close();
    await baseClient?.close();
    await bare?.close();
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface World {
  customerId: number;
  deviceId: string;
  oldestId: number;
}

/**
 * One customer's barrier with two objects and three companies holding keys on it, and ENTRIES journal entries
 * in one statement, a minute apart: the three companies in turn, every tenth a refusal for too many openings,
 * some without an answer from the controller, the rest opened.
 */
async function fill(ctx: AssembledContext): Promise<World> {
  const customerId = (await createCustomer(ctx, { displayName: 'Bench customer' })).id;
  const barrier = await journalBarrier(ctx, customerId, 'Bench gate');
  const holders = [];
  for (const name of ['Demo Cleaning Ltd', 'Courier Co', 'Builders & Sons']) {
    holders.push(await keyHolder(ctx, { customerId, barrier, name }));
  }
  const [a, b, c] = [holders[0]!, holders[1]!, holders[2]!];
  const [gate, door] = [barrier.objects[0]!, barrier.objects[1]!];
  const start = new Date(ctx.clock.now().getTime() - ENTRIES * 60_000);
  await sql`
    insert into journal (at, device_id, object_id, company_id, key_id, actor, outcome, acked_at)
    select at, ${barrier.deviceId}, case when g % 2 = 0 then ${gate.id}::integer else ${door.id}::integer end,
           case g % 3 when 0 then ${a.companyId}::integer when 1 then ${b.companyId}::integer
                      else ${c.companyId}::integer end,
           case g % 3 when 0 then ${a.keyRef}::integer when 1 then ${b.keyRef}::integer
                      else ${c.keyRef}::integer end,
           'Driver ' || (g % 97) || ', shift ' || (g % 3),
           case when g % ${REFUSED_EVERY}::integer = 0 then 'rate_limit'
                when g % 7 = 0 then 'device_timeout' else 'opened' end,
           case when g % ${REFUSED_EVERY}::integer = 0 or g % 7 = 0 then null else at end
      from generate_series(1, ${ENTRIES}::integer) as g,
           lateral (select ${start}::timestamptz + g * interval '1 minute' as at) as t
  `.execute(ctx.db);
  await sql`vacuum analyze journal`.execute(ctx.db);
  const oldest = await ctx.db
    .selectFrom('journal')
    .select((eb) => eb.fn.min('id').as('id'))
    .where('device_id', '=', barrier.deviceId)
    .executeTakeFirstOrThrow();
  return { customerId, deviceId: barrier.deviceId, oldestId: Number(oldest.id) };
}

/**
 * What a signed-in browser sends with every page: its session cookie, and the CSRF secret's cookie that its
 * first page set (without it, every page would make and set a new secret).
 */
async function browserHeaders(ctx: AssembledContext, origin: string, customerId: number) {
  const session = `gatelink-session=${await startSession(ctx, customerId)}`;
  const first = await fetch(`${origin}/offline`, { headers: { cookie: session, accept: 'text/html' } });
  await first.text();
  const csrf = first.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0]!)
    .find((cookie) => cookie.startsWith('gatelink-csrf='));
  if (!csrf) throw new Error('the first page set no CSRF cookie');
  return { cookie: `${session}; ${csrf}`, accept: 'text/html' };
}

/** The baseline: a bare Fastify route answering a page rendered once, of the journal page's bytes. */
async function startPageBaseline(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.get('/page', async (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

async function answer(origin: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${origin}${path}`, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return { text, bytes: Buffer.byteLength(text) };
}

/** An export's lines and bytes, counted as they arrive: a whole export is never held here. */
async function countExport(origin: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${origin}${path}`, { headers });
  if (response.status !== 200 || !response.body) throw new Error(`${path} answered ${response.status}`);
  const reader = response.body.getReader();
  let bytes = 0;
  let lines = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.byteLength;
    for (const byte of read.value) if (byte === 0x0a) lines++;
  }
  return { rows: lines - 1, bytes };
}

interface ExportFigures {
  rows: number;
  bytes: number;
  figures: Figures;
  before: NodeJS.MemoryUsage;
  peakRss: number;
  peakHeap: number;
  /** The most the heap held live (garbage collected before each look) during one more download. */
  peakLive: number;
  after: NodeJS.MemoryUsage;
}

/**
 * `times` downloads of an export, one after another, with this process's memory (it serves them) sampled
 * every 5 ms: settled before, the highest seen during, settled after. What is seen during includes the garbage
 * the collector has not come to yet, which V8 lets grow to its own limit whatever the download's length; so one
 * more download follows with a collection before each look, every 50 ms, which shows what the export holds
 * live. The export is counted afterwards, as it arrives, never held whole.
 */
async function exportFigures(
  gc: () => void,
  client: Client,
  call: () => CallSpec,
  times: number,
  count: () => Promise<{ rows: number; bytes: number }>,
): Promise<ExportFigures> {
  const before = await settledMemory(gc);
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 5);
  let figures: Figures;
  try {
    figures = await measure(client, call, { count: times, connections: 1, warmup: 0, seconds: 600 });
  } finally {
    clearInterval(sampler);
  }
  let peakLive = (await settledMemory(gc)).heapUsed;
  const collecting = setInterval(() => {
    gc();
    peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
  }, 50);
  try {
    await measure(client, call, { count: 1, connections: 1, warmup: 0, seconds: 600 });
  } finally {
    clearInterval(collecting);
  }
  const after = await settledMemory(gc);
  return { ...(await count()), figures, before, peakRss, peakHeap, peakLive, after };
}

function p95(figures: Figures): number {
  return percentile(
    [...figures.latencies].sort((x, y) => x - y),
    0.95,
  );
}

function line(name: string, figures: Figures): string {
  return `${name.padEnd(36)} p50 ${figures.p50.toFixed(3).padStart(8)} ms  p95 ${p95(figures)
    .toFixed(3)
    .padStart(
      8,
    )} ms  p99 ${figures.p99.toFixed(3).padStart(8)} ms  ${figures.perSecond.toFixed(0).padStart(5)}/s`;
}

function exportLine(name: string, e: ExportFigures): string {
  const seconds = e.figures.p50 / 1000;
  return [
    `${name}: ${mib(e.bytes)} in p50 ${seconds.toFixed(2)} s (${(e.rows / seconds).toFixed(0)} rows/s, ${mib(e.bytes / seconds)}/s) over ${e.figures.count}`,
    `  RSS before ${mib(e.before.rss)}, peak ${mib(e.peakRss)} (${signed(e.peakRss - e.before.rss)}), after ${mib(e.after.rss)}; heap before ${mib(e.before.heapUsed)}, peak ${mib(e.peakHeap)} (live at most ${mib(e.peakLive)}), after ${mib(e.after.heapUsed)}`,
  ].join('\n');
}

const MIB = 1024 * 1024;

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

function signed(bytes: number): string {
  return `${bytes < 0 ? '-' : '+'}${mib(Math.abs(bytes))}`;
}
