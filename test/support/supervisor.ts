import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Stands in for systemd's Restart=always: runs a command and starts it again whenever it exits, until stopped.
 * `kill()` sends SIGKILL to the running process (a power cut, as far as the process can tell); the supervisor
 * then starts it again like any other exit.
 */
export interface Supervisor {
  /** Everything every run wrote to stdout and stderr, in order. */
  output(): string;
  /** How many times the command was started. */
  readonly starts: number;
  kill(): Promise<void>;
  /** Stops restarting, then ends the running process with SIGTERM and waits for it. */
  stop(): Promise<void>;
}

export function startSupervisor(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; restartDelayMs?: number } = {},
): Supervisor {
  let output = '';
  let starts = 0;
  let stopping = false;
  let child: ChildProcess | null = null;
  let exited: Promise<unknown> = Promise.resolve();
  const launch = () => {
    starts += 1;
    const running = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = running;
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    running.stdout?.on('data', collect);
    running.stderr?.on('data', collect);
    exited = once(running, 'exit');
    running.on('exit', (code, signal) => {
      output += `[supervisor: exited ${signal ?? code}]\n`;
      if (!stopping) setTimeout(launch, options.restartDelayMs ?? 20);
    });
  };
  launch();
  const alive = () => child !== null && child.exitCode === null && child.signalCode === null;
  return {
    output: () => output,
    get starts() {
      return starts;
    },
    kill: async () => {
      if (!alive()) return;
      const waiting = exited;
      child?.kill('SIGKILL');
      await waiting;
    },
    stop: async () => {
      stopping = true;
      if (!alive()) return;
      const waiting = exited;
      child?.kill('SIGTERM');
      await waiting;
    },
  };
}
