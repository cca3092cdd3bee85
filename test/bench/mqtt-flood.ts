import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { collector, settledMemory } from './memory.js';
import { ClientsProcess, type FloodFigures } from './mqtt-clients.js';

/**
 * The cloud's memory under the attack of issue 11, finding 1 (target: it grows by less than a few MiB, and
 * stays flat): clients that never log in each declare a CONNECT of 200 MiB on the embedded broker's port and
 * stream it as fast as their socket takes it, reconnecting as soon as they are closed, for a while. The
 * attackers run in a child process, so only the cloud's side is counted. Baseline in the same run: the same
 * cloud idle just before; then its peak during the attack, and its memory once the attack is over.
 */
const ATTACKERS = 8;
const SECONDS = 10;
const DECLARED_BYTES = 200 * 1024 * 1024;
/** How often the memory is sampled during the attack (no garbage collection forced there). */
const SAMPLE_MS = 100;
/** Growth of the cloud's resident memory the attack may cause, at its peak and after. */
const TARGET_MIB = 4;

const MiB = 1024 * 1024;

interface Memory {
  rss: number;
  heap: number;
}

export async function benchMqttFlood(): Promise<void> {
  const gc = collector();
  console.log(
    `\n## MQTT flood: ${ATTACKERS} clients stream 200 MiB CONNECTs at the embedded broker for ${SECONDS} s (PGlite)`,
  );
  const database = await createTestDatabase(undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  let cloud: RunningCloud | undefined;
  try {
    cloud = await startCloud({ config: localCloudConfig(dataDir), database, jobs: false });
    const flood = new ClientsProcess('flood', cloud.controllerLink.deviceUrl);
    try {
      await flood.waitFor('ready', 30_000);
      report(await attack(gc, flood));
    } finally {
      await flood.stop();
    }
  } finally {
    await cloud?.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface FloodRun {
  idle: Memory;
  peak: Memory;
  after: Memory;
  figures: FloodFigures;
  /** Bytes this process read during the attack, nearly all of them from the attackers' sockets; null off Linux. */
  read: number | null;
}

async function attack(gc: () => void, flood: ClientsProcess): Promise<FloodRun> {
  // A moment idle first, so that whatever starting the cloud left to do is done.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idle = memoryOf(await settledMemory(gc));
  const peak = { ...idle };
  const sampler = setInterval(() => {
    const now = memoryOf(process.memoryUsage());
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heap = Math.max(peak.heap, now.heap);
  }, SAMPLE_MS);
  process.stdout.write('attacking...');
  const readBefore = bytesReadSoFar();
  try {
    flood.send({ type: 'flood', attackers: ATTACKERS, seconds: SECONDS, declaredBytes: DECLARED_BYTES });
    const figures = await flood.waitFor('flooded', (SECONDS + 60) * 1000);
    const readAfter = bytesReadSoFar();
    console.log(' over');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const read = readBefore === null || readAfter === null ? null : readAfter - readBefore;
    return { idle, peak, after: memoryOf(await settledMemory(gc)), figures, read };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * What this process has passed to read(2) so far (`rchar` of /proc/self/io): with the database in memory, the
 * sockets are what it reads from, and libuv reads TCP with read(2). Null where there is no /proc.
 */
function bytesReadSoFar(): number | null {
  try {
    const rchar = /^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return rchar ? Number(rchar[1]) : null;
  } catch {
    return null;
  }
}

function memoryOf(usage: NodeJS.MemoryUsage): Memory {
  return { rss: usage.rss, heap: usage.heapUsed };
}

function report({ idle, peak, after, figures, read }: FloodRun): void {
  console.log(formatMemory('baseline: the cloud idle (after gc)', idle, idle));
  console.log(formatMemory('under attack (peak, sampled)', peak, idle));
  console.log(formatMemory('after the attack (after gc)', after, idle));
  const connections = Math.max(1, figures.connections);
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(
    `attackers: ${figures.connections} connections of ${(DECLARED_BYTES / MiB).toFixed(0)} MiB declared; their ` +
      `sockets took ${kib(figures.written / connections)} per connection before the close (at most ` +
      `${kib(figures.mostInOne)}; kernel buffers included)`,
  );
  console.log(
    read === null
      ? 'accepted by the cloud: not measured (no /proc/self/io)'
      : `accepted by the cloud: ${kib(read / connections)} read per connection, ${(read / MiB).toFixed(1)} MiB in all`,
  );
  const growth = (peak.rss - idle.rss) / MiB;
  const kept = (after.rss - idle.rss) / MiB;
  console.log(
    `ratio: peak rss / idle rss ${(peak.rss / idle.rss).toFixed(2)}x  growth ${growth.toFixed(1)} MiB at the peak, ${kept.toFixed(1)} MiB after (target < ${TARGET_MIB} MiB, flat)`,
  );
}

function formatMemory(name: string, memory: Memory, idle: Memory): string {
  const mib = (bytes: number) => `${(bytes / MiB).toFixed(1).padStart(6)} MiB`;
  const delta = (bytes: number) => `${bytes >= 0 ? '+' : ''}${(bytes / MiB).toFixed(1)}`;
  return `${name.padEnd(38)} rss ${mib(memory.rss)} (${delta(memory.rss - idle.rss)})  heap ${mib(memory.heap)} (${delta(memory.heap - idle.heap)})`;
}
