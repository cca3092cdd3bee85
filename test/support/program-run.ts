import { spawn } from 'node:child_process';

/** What a command-line program printed and how it ended. */
export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <argv>` to its end, as a person runs one of the project's programs, and collects its output. */
export function runProgram(
  argv: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<ProgramRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
