import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ConnectionTimes } from './mqtt-relay.js';

const MEMORY_REPORT = fileURLToPath(new URL('./memory-report.cjs', import.meta.url));

/** Memory figures of a measured process, in megabytes. */
export interface Memory {
  /** VmRSS from /proc/<pid>/status. */
  rss: number;
  /** V8's heap in use plus external memory (buffers), from the process itself on SIGUSR2 (memory-report.cjs). */
  heapAndExternal: number | null;
}

/** A process under measurement: spawned with plain node (no TypeScript loader), its stdout dropped. */
export class MeasuredProcess {
  readonly #child: ChildProcess;
  readonly #memoryFile: string;
  readonly #exited: Promise<void>;
  readonly #errors: Buffer[] = [];
  #hasExited = false;
  /** performance.now() just before the spawn. */
  readonly spawnedAt: number;

  constructor(args: string[], options: { env: Record<string, string>; memoryFile: string; gc?: boolean }) {
    this.#memoryFile = options.memoryFile;
    const env: Record<string, string | undefined> = { ...process.env, ...options.env };
    // The benchmark runs under tsx; what it measures runs as a controller does, with nothing of tsx's.
    delete env.NODE_OPTIONS;
    env.BENCH_MEMORY_FILE = options.memoryFile;
    const flags = ['--require', MEMORY_REPORT, ...(options.gc ? ['--expose-gc'] : [])];
    this.spawnedAt = performance.now();
    this.#child = spawn(process.execPath, [...flags, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
    this.#child.stderr?.on('data', (chunk: Buffer) => this.#errors.push(chunk));
    this.#exited = new Promise((resolve) =>
      this.#child.once('exit', () => {
        this.#hasExited = true;
        resolve();
      }),
    );
  }

  /** Waits for this process's connection through `relay` to reach SUBACK; fails if it ends first or in 30 s. */
  async connected(times: Promise<ConnectionTimes>): Promise<ConnectionTimes> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const failed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not connected within 30 s${this.#said()}`)), 30_000);
      void this.#exited.then(() => reject(new Error(`ended before connecting${this.#said()}`)));
    });
    try {
      return await Promise.race([times, failed]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** RSS from the kernel, and the heap from the process when it answers SIGUSR2 within 5 s. */
  async memory(): Promise<Memory> {
    const pid = this.#child.pid;
    if (pid === undefined || this.#hasExited) throw new Error(`the measured process ended${this.#said()}`);
    const rss = vmRss(pid);
    rmSync(this.#memoryFile, { force: true });
    this.#child.kill('SIGUSR2');
    for (let i = 0; i < 100; i++) {
      if (existsSync(this.#memoryFile)) {
        const usage = JSON.parse(readFileSync(this.#memoryFile, 'utf8')) as NodeJS.MemoryUsage;
        return { rss, heapAndExternal: (usage.heapUsed + usage.external) / 2 ** 20 };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { rss, heapAndExternal: null };
  }

  /** RSS alone, without disturbing the process. */
  rss(): number {
    const pid = this.#child.pid;
    if (pid === undefined || this.#hasExited) throw new Error(`the measured process ended${this.#said()}`);
    return vmRss(pid);
  }

  /** SIGTERM, then SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (!this.#hasExited) this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(timer);
    rmSync(this.#memoryFile, { force: true });
  }

  #said(): string {
    const said = Buffer.concat(this.#errors).toString('utf8').slice(-2000);
    return said ? `: ${said}` : '';
  }
}

/** VmRSS of `pid` in megabytes. */
function vmRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kilobytes) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kilobytes) / 1024;
}
