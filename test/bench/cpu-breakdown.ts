import { Session } from 'node:inspector/promises';

/**
 * Where the measured process's thread spends an operation's time, from a V8 CPU profile of an untimed run
 * (issue 33: find where each millisecond goes before changing anything). The profile is taken apart by where
 * each sampled frame's code comes from: the database (PGlite's WebAssembly and its JavaScript, or the `pg`
 * driver), the query builder, MQTT (the embedded broker and the packet codec), HTTP (Fastify and Node's own
 * HTTP), validation, signing and verifying, logging, rendering, Gatelink's own code, Node's other internals, the
 * garbage collector, and the time the thread waited (idle). Each share is divided by the number of operations,
 * so the line reads as one operation's time on the thread. Work on libuv's thread pool (verifications made off
 * the thread) and in other processes (the controller, the load client) is not on this thread and not counted.
 */

/** The categories, in the order printed; the first whose test matches a frame takes its time. */
const CATEGORIES: readonly { name: string; test: (url: string, fn: string) => boolean }[] = [
  { name: 'idle', test: (_url, fn) => fn === '(idle)' },
  // Taking the profile itself (its stop is sampled too): left out of every figure.
  { name: 'profiler', test: (url) => url === 'node:inspector' },
  { name: 'gc', test: (_url, fn) => fn === '(garbage collector)' },
  // V8's own and the native code under it that no JavaScript frame owns: sockets, timers, libuv.
  { name: 'native', test: (_url, fn) => fn === '(program)' },
  {
    name: 'database',
    test: (url) => /wasm:\/\/|@electric-sql\/pglite|node_modules\/(pg|pg-protocol|pg-pool)\//.test(url),
  },
  { name: 'query builder', test: (url) => url.includes('node_modules/kysely/') },
  { name: 'mqtt', test: (url) => /node_modules\/(aedes|aedes-[^/]+|mqtt-packet|mqemitter|mqtt)\//.test(url) },
  {
    name: 'http',
    test: (url) =>
      /node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|light-my-request)\/|^node:_http|^node:http/.test(
        url,
      ),
  },
  { name: 'validation', test: (url) => url.includes('node_modules/zod/') },
  { name: 'crypto', test: (url) => /node_modules\/@noble\/|^node:crypto|^node:internal\/crypto/.test(url) },
  { name: 'logging', test: (url) => /node_modules\/(pino|pino-[^/]+|sonic-boom)\//.test(url) },
  {
    name: 'rendering',
    test: (url) => /\.tsx$|node_modules\/(@kitajs\/html|preact|preact-render-to-string)\//.test(url),
  },
  {
    name: 'gatelink',
    test: (url) => /\/(cloud|shared|device|company)\//.test(url) && !url.includes('node_modules'),
  },
  { name: 'network', test: (url) => /^node:(net|internal\/stream_base_commons|internal\/net)/.test(url) },
  { name: 'node', test: (url) => url.startsWith('node:') },
  { name: 'json', test: (_url, fn) => fn === 'parse' || fn === 'stringify' },
];

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** Milliseconds of the thread per category over the whole profile. */
export type Breakdown = Map<string, number>;

/** Profiles the current thread while `work` runs; resolves with its result and the breakdown of the time. */
export async function profiled<T>(work: () => Promise<T>): Promise<{ result: T; breakdown: Breakdown }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const result = await work();
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
    return { result, breakdown: breakdownOf(profile) };
  } finally {
    session.disconnect();
  }
}

export function breakdownOf(profile: Profile): Breakdown {
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
  const category = new Map<number, string>();
  // Native functions (no script) take the category of the code that called them: a signature made through
  // node:crypto is crypto, a socket's writev is the network's. Nodes come parents first.
  for (const node of profile.nodes) {
    const { url, functionName } = node.callFrame;
    const parent = parentOf.get(node.id);
    const own = CATEGORIES.find((each) => each.test(url, functionName))?.name;
    const inherited = url === '' && parent ? category.get(parent.id) : undefined;
    category.set(node.id, own ?? inherited ?? 'other');
  }
  const totals: Breakdown = new Map(CATEGORIES.map((each) => [each.name, 0]));
  totals.set('other', 0);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's delta is the time since the one before it: it belongs to the frame sampled at its end.
  for (let i = 0; i < samples.length; i++) {
    const name = category.get(samples[i]!) ?? 'other';
    totals.set(name, totals.get(name)! + (deltas[i] ?? 0) / 1000);
  }
  return totals;
}

/** One line: each category's time per operation, largest first, leaving out what rounds to nothing. */
export function formatBreakdown(name: string, breakdown: Breakdown, operations: number): string {
  const busy = [...breakdown].filter(([category]) => category !== 'idle' && category !== 'profiler');
  const total = busy.reduce((sum, [, ms]) => sum + ms, 0) / operations;
  const parts = busy
    .map(([category, ms]) => [category, ms / operations] as const)
    .filter(([, ms]) => ms >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([category, ms]) => `${category} ${ms.toFixed(3)}`);
  return `${name}: ${total.toFixed(3)} ms of the thread per operation (${parts.join(', ')}; idle ${(
    (breakdown.get('idle') ?? 0) / operations
  ).toFixed(3)})`;
}

/** The difference of two operations' breakdowns, category by category, the largest changes first. */
export function formatDifference(
  name: string,
  a: { breakdown: Breakdown; operations: number },
  b: { breakdown: Breakdown; operations: number },
): string {
  const parts = [...a.breakdown.keys()]
    .filter((category) => category !== 'idle' && category !== 'profiler')
    .map(
      (category) =>
        [
          category,
          (b.breakdown.get(category) ?? 0) / b.operations - (a.breakdown.get(category) ?? 0) / a.operations,
        ] as const,
    )
    .filter(([, ms]) => Math.abs(ms) >= 0.005)
    .sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]))
    .map(([category, ms]) => `${category} ${ms >= 0 ? '+' : ''}${ms.toFixed(3)}`);
  return `${name}: ${parts.join(', ') || 'no category moved by 0.005 ms or more'}`;
}
