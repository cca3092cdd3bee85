import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time by process, read from Linux's /proc: what a piece of work costs the processes that share the
 * machine's cores, where a latency figure says only what it cost the caller. Clock ticks are 10 ms (USER_HZ is
 * 100 on every Linux Node runs on), so a figure is only as good as the run is long: seconds of work, not one call.
 */

/** Milliseconds of CPU the process has used, user and system. */
export function processCpuMs(pid: number): number | null {
  const fields = statFields(pid);
  if (!fields) return null;
  // After the command's closing parenthesis: state is field 3, utime 14, stime 15 (cutime 16, cstime 17).
  return 10 * (Number(fields[11]) + Number(fields[12]));
}

/**
 * Milliseconds of CPU used by the PostgreSQL server on this machine: its live processes, and the backends
 * that have ended (a backend's time joins its parent's children's time when the server reaps it), so that a
 * difference of two readings holds connections that closed between them. Null where /proc cannot be read.
 */
export function postgresCpuMs(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const servers = new Map<number, { ppid: number; ms: number; reaped: number }>();
  for (const name of pids) {
    const pid = Number(name);
    if (command(pid) !== 'postgres') continue;
    const fields = statFields(pid);
    if (!fields) continue;
    const [ppid, utime, stime, cutime, cstime] = [1, 11, 12, 13, 14].map((i) => Number(fields[i]));
    servers.set(pid, { ppid: ppid!, ms: 10 * (utime! + stime!), reaped: 10 * (cutime! + cstime!) });
  }
  let total = 0;
  for (const server of servers.values()) {
    total += server.ms;
    // Only the postmaster's reaped children are its backends: a backend reaps nothing of its own.
    if (!servers.has(server.ppid)) total += server.reaped;
  }
  return total;
}

function command(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command, which may itself hold spaces and parentheses. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
