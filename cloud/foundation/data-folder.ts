import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * The cloud's data folder (`GATELINK_DATA_DIR`): the embedded database, the service key, the operator token
 * and the demo's keys. Two rules, both in cloud/README.md ("The data folder"):
 * - it is its owner's alone: the folder is 0700 and the files in it lose any group or other bits at every
 *   start (the embedded database writes its files 0666 whatever the umask says; the folder's mode is what
 *   keeps the ones it writes later private);
 * - one process uses an embedded database at a time: two PGlite instances writing the same files corrupt
 *   them, so a second cloud on the same folder refuses to start, naming the process that holds it.
 */

/** Held by the process that runs on the folder; removed when it stops, left behind when it is killed. */
const LOCK_FILE = 'cloud.pid';

/** What the lock file holds: enough to tell a live holder from a dead one whose pid was reused. */
interface Holder {
  pid: number;
  /** The holder's start time as the kernel counts it (Linux), null where that cannot be read. */
  started: string | null;
  since: string;
  command: string;
}

export class DataFolderInUseError extends Error {
  override name = 'DataFolderInUseError';

  constructor(
    readonly folder: string,
    readonly holder: Holder,
  ) {
    super(
      `the data folder ${folder} is in use by process ${holder.pid} (${holder.command}, since ${holder.since}): ` +
        'stop that one first, or give this one another folder with GATELINK_DATA_DIR',
    );
  }
}

export interface DataFolderLock {
  release(): void;
}

/**
 * Makes the folder private, creating it if needed: 0700, so that nothing in it can be reached by others from
 * now on. What is already in it is tightened once the cloud has written its own files there (`tighten`).
 */
export function makePrivate(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  chmodSync(folder, statSync(folder).mode & 0o700);
}

/** Removes group and other permissions from everything below `folder`, the folder itself included. */
export function tighten(folder: string): void {
  const stat = lstatSync(folder);
  if (stat.isSymbolicLink()) return;
  if ((stat.mode & 0o077) !== 0) chmodSync(folder, stat.mode & 0o700);
  if (!stat.isDirectory()) return;
  for (const name of readdirSync(folder)) tighten(join(folder, name));
}

/**
 * Claims the folder for this process, or throws DataFolderInUseError while another live process holds it.
 * A lock left by a process that was killed (no such process now, or another one under its reused pid) is
 * taken over.
 */
export function lockDataFolder(folder: string, command = commandLine()): DataFolderLock {
  const file = join(folder, LOCK_FILE);
  const me: Holder = {
    pid: process.pid,
    started: startTimeOf(process.pid),
    since: new Date().toISOString(),
    command,
  };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(file);
      if (holder && isAlive(holder)) throw new DataFolderInUseError(folder, holder);
      rmSync(file, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    return {
      release() {
        if (readHolder(file)?.pid === me.pid) rmSync(file, { force: true });
      },
    };
  }
  throw new Error(`could not lock the data folder ${folder}: ${file} keeps coming back; remove it and retry`);
}

function readHolder(file: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    if (!Number.isSafeInteger(holder.pid) || (holder.pid ?? 0) <= 0) return null;
    return {
      pid: holder.pid!,
      started: typeof holder.started === 'string' ? holder.started : null,
      since: String(holder.since ?? 'an unknown time'),
      command: String(holder.command ?? 'unknown command'),
    };
  } catch {
    // Unreadable or half-written: its writer died before finishing, or it is not ours.
    return null;
  }
}

/** The process exists, and where its start time is known, it is the same process that wrote the lock. */
function isAlive(holder: Holder): boolean {
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = startTimeOf(holder.pid);
  return holder.started === null || started === null || started === holder.started;
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. Linux only. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function commandLine(): string {
  const script = process.argv[1]?.split('/').slice(-2).join('/') ?? 'node';
  return `node ${script}`;
}

/**
 * Where the cloud running on this folder answers, for `gatelink-admin` on the same machine (docs/design.md
 * section 8): written once the HTTP server listens, removed when it stops, and believed only while the process
 * that wrote it lives, so that a stale record never sends the folder's operator token to whatever took the port.
 */
const ADDRESS_FILE = 'cloud-address.json';

export function recordAddress(folder: string, url: string): { remove(): void } {
  const file = join(folder, ADDRESS_FILE);
  const record = { url, pid: process.pid, started: startTimeOf(process.pid) };
  const fd = openSync(file, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
  } finally {
    closeSync(fd);
  }
  return {
    remove() {
      try {
        const current = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown };
        if (current.pid === process.pid) rmSync(file, { force: true });
      } catch {
        // Gone already, or another instance's record replaced it: nothing of ours to remove.
      }
    },
  };
}

/** The recorded address of the cloud on `folder`: `running` only while its writer lives. */
export function recordedAddress(folder: string): { url: string; running: boolean } | null {
  let record: { url?: unknown; pid?: unknown; started?: unknown };
  try {
    record = JSON.parse(readFileSync(join(folder, ADDRESS_FILE), 'utf8'));
  } catch {
    return null;
  }
  if (typeof record.url !== 'string' || !Number.isSafeInteger(record.pid)) return null;
  const holder: Holder = {
    pid: record.pid as number,
    started: typeof record.started === 'string' ? record.started : null,
    since: '',
    command: '',
  };
  return { url: record.url, running: holder.pid === process.pid || isAlive(holder) };
}

/** The address a client on this machine reaches the HTTP server at, from the host it listens on. */
export function localAddress(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '' || host === '127.0.0.1') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '::1') return `http://[::1]:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
