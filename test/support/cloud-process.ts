import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

/**
 * `npm run cloud` as a process of its own, for what only a real process shows: a second start on the same
 * data folder, SIGKILL in the middle of work, a restart on the same database. Configured by environment
 * exactly as an operator would; ports are chosen by the system and read back from what it prints.
 */
const ROOT = resolve(import.meta.dirname, '../..');

export interface CloudProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly baseUrl: string;
  /** The MQTT URL it prints for devices. */
  readonly deviceUrl: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM and wait for the exit (a clean stop). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for the exit: no cleanup of any kind runs. */
  kill(): Promise<void>;
}

export interface CloudRun {
  /** It listened after all (and was stopped at once). */
  started: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child cloud: the parent's, less what would point it elsewhere, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  // The test runner sets BASE_URL for its own purposes; a cloud would take it for its public address.
  const {
    DATABASE_URL: _db,
    MQTT_URL: _mqtt,
    OPERATOR_TOKEN: _token,
    BASE_URL: _base,
    ...rest
  } = process.env;
  return { ...rest, PORT: '0', MQTT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env };
}

/**
 * The cloud as operators run it (`npm run cloud`: compiled, dist/ made by the run's global setup,
 * test/support/build.ts), or a test's own TypeScript `script` through tsx. The compiled cloud also starts in
 * about a third of the time tsx takes to load the sources, which the suites that start a cloud a dozen times
 * feel.
 */
function spawnCloud(env: Record<string, string>, script?: string): ChildProcess {
  const args = script === undefined ? ['bin/gatelink-cloud.mjs'] : ['--import', 'tsx', script];
  return spawn(process.execPath, args, {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Starts a cloud and resolves once it listens; rejects with its output if it exits first. `script` is another
 * program that starts the cloud and prints the same lines, for a test that composes it with its own options.
 */
export async function startCloudProcess(env: Record<string, string>, script?: string): Promise<CloudProcess> {
  const child = spawnCloud(env, script);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = once(child, 'exit');
  const listening = new Promise<{ baseUrl: string; deviceUrl: string }>((done, fail) => {
    const check = () => {
      const base = /listening at (\S+)/.exec(output);
      const mqtt = /MQTT for devices: (\S+)/.exec(output);
      if (base?.[1] && mqtt?.[1]) done({ baseUrl: base[1], deviceUrl: mqtt[1] });
    };
    child.stdout!.on('data', check);
    void exited.then(([code]) =>
      fail(new Error(`the cloud exited with ${code} before listening:\n${output}`)),
    );
  });
  const { baseUrl, deviceUrl } = await listening;
  const waitExit = async (signal: NodeJS.Signals): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill(signal);
    const [code] = await exited;
    return code as number | null;
  };
  return {
    child,
    pid: child.pid!,
    baseUrl: baseUrl.replace('localhost', '127.0.0.1'),
    deviceUrl: deviceUrl.replace('localhost', '127.0.0.1'),
    output: () => output,
    stop: () => waitExit('SIGTERM'),
    kill: async () => {
      await waitExit('SIGKILL');
    },
  };
}

/** Runs a cloud that is expected not to start, to its exit. */
export async function runCloudToExit(env: Record<string, string>): Promise<CloudRun> {
  const child = spawnCloud(env);
  let stdout = '';
  let stderr = '';
  let started = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    // A cloud that did start would never exit by itself: stop it, and let the caller's assertion say so.
    if (!started && /listening at/.test(stdout)) {
      started = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  return { started, code: code as number | null, stdout, stderr };
}
