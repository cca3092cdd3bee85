import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Hosts made of Linux network namespaces, for the deployment suites: each host is a namespace with one
 * interface (eth0) on a switch, a bridge inside a namespace of its own, so that nothing of the machine's
 * network, firewall or forwarding takes part. The test process reaches the switch through one veth of its own
 * (the "tester" address), and names resolve through /etc/netns/<namespace>/hosts, which `ip netns exec` mounts
 * over /etc/hosts. Only loopback and these namespaces are ever contacted.
 *
 * Everything a lab makes carries the test process's pid in its name, so that a later run removes what a killed
 * run left behind (`sweepAbandonedLabs`), and `remove` kills every process in the lab's namespaces before
 * deleting them, even when a test failed half-way.
 */
const run = promisify(execFile);
const PREFIX = 'glnet';

/** What is missing to make hosts on this machine, or undefined when nothing is. */
export function labMissing(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0)
    return 'network namespaces need root: run the deployment suites as root (CI does)';
  if (!existsSync('/usr/sbin/ip') && !existsSync('/usr/bin/ip') && !existsSync('/sbin/ip')) {
    return 'the ip command is missing: apt-get install iproute2';
  }
  return undefined;
}

export interface Host {
  readonly name: string;
  /** The namespace's name, for `ip netns exec`. */
  readonly namespace: string;
  readonly address: string;
}

export interface SpawnedProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves once the output matches; rejects with the output if the process exits first. */
  waitFor(pattern: RegExp, what: string, timeoutMs?: number): Promise<RegExpExecArray>;
  /** `signal` (SIGTERM), then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number, signal?: NodeJS.Signals): Promise<number | null>;
}

export interface Lab {
  readonly id: string;
  /** The test process's own address on the switch. */
  readonly testerAddress: string;
  /** Makes a host on the switch, its hosts file naming every host of `names`. */
  addHost(name: string, octet: number): Promise<Host>;
  /** Deletes a host's namespace and hosts file, with every process in it. */
  removeHost(host: Host): Promise<void>;
  /** Every name → address the hosts files hold (those given to `name`, and the hosts themselves). */
  name(hostname: string, address: string): void;
  exec(host: Host, command: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string>;
  spawn(host: Host, command: string, args: readonly string[], env?: NodeJS.ProcessEnv): SpawnedProcess;
  remove(): Promise<void>;
}

function namespaceName(pid: number, name: string): string {
  return `${PREFIX}-${pid}-${name}`;
}

/** The /24 a run uses, from 198.18.0.0/15, a range set aside for network tests that no real network routes. */
function subnetOf(pid: number): string {
  return `198.${18 + ((pid >> 8) & 1)}.${pid & 255}`;
}

/** A locally administered unicast address, from the run's pid and the host's octet. */
function macOf(pid: number, octet: number): string {
  const bytes = [0x02, 0x67, (pid >> 16) & 255, (pid >> 8) & 255, pid & 255, octet];
  return bytes.map((byte) => byte.toString(16).padStart(2, '0')).join(':');
}

function ipSync(args: readonly string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // Already gone: removal is idempotent.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills every process in a namespace and deletes it, its hosts file folder and, for the tester, its veth. */
function removeNamespaceSync(namespace: string): void {
  let pids: string[] = [];
  try {
    pids = execFileSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    pids = [];
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Exited meanwhile.
    }
  }
  ipSync(['netns', 'del', namespace]);
  rmSync(join('/etc/netns', namespace), { recursive: true, force: true });
}

/**
 * Removes the namespaces, links and temporary folders (`glnet-<pid>-...` under the temporary folder) of runs
 * whose process is gone: a run killed before its cleanup.
 */
export function sweepAbandonedLabs(): void {
  const abandoned = (name: string) => {
    const match = new RegExp(`^${PREFIX}-(\\d+)-`).exec(name);
    return match !== null && !processAlive(Number(match[1])) ? Number(match[1]) : undefined;
  };
  for (const namespace of existsSync('/run/netns') ? readdirSync('/run/netns') : []) {
    const pid = abandoned(namespace);
    if (pid === undefined) continue;
    removeNamespaceSync(namespace);
    ipSync(['link', 'del', `${PREFIX}${pid}`]);
  }
  for (const name of readdirSync(tmpdir())) {
    if (abandoned(name) !== undefined) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function hostsFile(names: ReadonlyMap<string, string>): string {
  const lines = ['127.0.0.1 localhost', '::1 localhost'];
  for (const [hostname, address] of names) lines.push(`${address} ${hostname}`);
  return `${lines.join('\n')}\n`;
}

export function spawnIn(
  namespace: string,
  command: string,
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
) {
  // `ip netns exec` execs the command in place: the child's pid is the command's own.
  const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], {
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = once(child, 'exit');
  // Closed: exited, and everything it wrote has been read.
  let closed = false;
  child.once('close', () => {
    closed = true;
  });
  const spawned: SpawnedProcess = {
    child,
    output: () => output,
    waitFor(pattern, what, timeoutMs = 60_000) {
      return new Promise((done, fail) => {
        const timer = setTimeout(() => {
          finish();
          fail(new Error(`${what} did not happen within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            finish();
            done(match);
          }
        };
        const onExit = () => {
          if (pattern.test(output)) return;
          finish();
          fail(
            new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before ${what}:\n${output}`),
          );
        };
        const finish = () => {
          clearTimeout(timer);
          child.stdout.off('data', check);
          child.stderr.off('data', check);
          child.off('close', onExit);
        };
        child.stdout.on('data', check);
        child.stderr.on('data', check);
        child.once('close', onExit);
        check();
        if (closed) onExit();
      });
    },
    async stop(graceMs = 10_000, signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const [code] = await exited;
      clearTimeout(timer);
      return code as number | null;
    },
  };
  return spawned;
}

/**
 * Makes the switch and the tester's link. Call `remove` in afterAll; a process exit removes the lab too, and
 * the next run sweeps what a killed one left.
 */
export async function createLab(): Promise<Lab> {
  sweepAbandonedLabs();
  const pid = process.pid;
  const subnet = subnetOf(pid);
  const sw = namespaceName(pid, 'switch');
  const testerLink = `${PREFIX}${pid}`;
  const hosts = new Map<string, Host>();
  const names = new Map<string, string>();
  const ip = (...args: string[]) => run('ip', args);
  const removeSync = () => {
    for (const host of hosts.values()) removeNamespaceSync(host.namespace);
    removeNamespaceSync(sw);
    ipSync(['link', 'del', testerLink]);
  };
  process.once('exit', removeSync);

  await ip('netns', 'add', sw);
  await ip('-n', sw, 'link', 'add', 'switch', 'type', 'bridge');
  await ip('-n', sw, 'link', 'set', 'switch', 'up');
  await ip('-n', sw, 'link', 'set', 'lo', 'up');
  // The tester's end stays in this namespace; its peer is a port of the switch.
  await ip('link', 'add', 'name', testerLink, 'type', 'veth', 'peer', 'name', 'tester', 'netns', sw);
  await ip('-n', sw, 'link', 'set', 'tester', 'master', 'switch', 'up');
  await ip('addr', 'add', `${subnet}.1/24`, 'dev', testerLink);
  await ip('link', 'set', testerLink, 'up');

  const writeHostsFiles = () => {
    for (const host of hosts.values()) {
      const folder = join('/etc/netns', host.namespace);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'hosts'), hostsFile(names));
    }
  };

  return {
    id: String(pid),
    testerAddress: `${subnet}.1`,
    async addHost(name, octet) {
      const namespace = namespaceName(pid, name);
      const address = `${subnet}.${octet}`;
      const host: Host = { name, namespace, address };
      hosts.set(name, host);
      names.set(name, address);
      await ip('netns', 'add', namespace);
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
      await ip(
        'link',
        'add',
        'name',
        name,
        'netns',
        sw,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        namespace,
      );
      await ip('-n', sw, 'link', 'set', name, 'master', 'switch', 'up');
      await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      // One hardware address per lab address: a host that replaces another at the same address takes its
      // place on the link at once, as a floating address moves, rather than after the neighbours' cached
      // entry for the old host expires (up to 45 s).
      await ip('-n', namespace, 'link', 'set', 'eth0', 'address', macOf(pid, octet));
      await ip('-n', namespace, 'link', 'set', 'eth0', 'up');
      writeHostsFiles();
      return host;
    },
    async removeHost(host) {
      removeNamespaceSync(host.namespace);
      hosts.delete(host.name);
      // The switch's end went with its peer.
      ipSync(['-n', sw, 'link', 'del', host.name]);
    },
    name(hostname, address) {
      names.set(hostname, address);
      writeHostsFiles();
    },
    async exec(host, command, args, env) {
      const { stdout } = await run('ip', ['netns', 'exec', host.namespace, command, ...args], {
        env: env ?? process.env,
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    },
    spawn: (host, command, args, env) => spawnIn(host.namespace, command, args, env),
    async remove() {
      removeSync();
      process.off('exit', removeSync);
    },
  };
}
