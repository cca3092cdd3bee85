import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** `global.gc` when node runs with --expose-gc, otherwise the same function obtained at run time. */
export function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The process's memory once garbage collection has run a few times, a turn apart. */
export async function settledMemory(gc: () => void): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage();
}
