import type { DaemonStatus } from '../runtime/status.js';

/** True when the status file belongs to a daemon process that is still alive. */
export function daemonAlive(status: DaemonStatus | null): boolean {
  if (!status?.running) return false;
  try {
    process.kill(status.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
