import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The controller daemon as a process of its own (recording-controller.ts), to be killed with SIGKILL and
 * started again on the same state folder, as a power cut would.
 */
const ENTRY = resolve(import.meta.dirname, 'recording-controller.ts');

export interface ControllerProcess {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export async function startControllerProcess(
  configPath: string,
  gateLog: string,
): Promise<ControllerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, configPath, gateLog], {
    cwd: resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = once(child, 'exit');
  await new Promise<void>((done, fail) => {
    child.stdout!.on('data', () => {
      if (output.includes('recording controller running')) done();
    });
    void exited.then(([code]) => fail(new Error(`the controller exited with ${code}:\n${output}`)));
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  return { child, output: () => output, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** The gate log: one command id per time an output went active, in order. */
export function readGateLog(gateLog: string): string[] {
  if (!existsSync(gateLog)) return [];
  return readFileSync(gateLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]!);
}
