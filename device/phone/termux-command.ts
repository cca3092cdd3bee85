import { execFile } from 'node:child_process';

/**
 * One Termux:API command run the way the phone controller runs them all (docs/design.md section 12.6): by
 * name, found on PATH (Termux's `$PREFIX/bin`, not `/usr/bin`: nothing here names a path of a glibc system),
 * with arguments and no shell, a timeout and a bound on what it may print. What happened is data, never an
 * exception, so that each caller says in its own words what it means.
 */
export type TermuxResult =
  | { kind: 'done'; stdout: string }
  /** Not on PATH: the `termux-api` package is not installed (`pkg install termux-api`). */
  | { kind: 'missing' }
  /**
   * No answer in time. The commands ask the Termux:API app through a broadcast and wait for it; without the app
   * installed, or with the app unable to start, they wait for ever.
   */
  | { kind: 'timeout' }
  /** Ended with a status other than 0 (a usage error, an `am` that could not run) or printed too much. */
  | { kind: 'failed'; detail: string };

export interface TermuxRunOptions {
  timeoutMs: number;
  /** The environment, whose PATH finds the command; the process's own by default. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Far above what the commands print (a call log of 10 entries is about 2 KB); more is not theirs. */
export const MAX_OUTPUT_BYTES = 64 * 1024;

/** Runs a command of Termux:API; never rejects. */
export function runTermux(
  command: string,
  args: readonly string[],
  options: TermuxRunOptions,
): Promise<TermuxResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: TermuxResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const child = execFile(
      command,
      args,
      {
        env: options.env ?? process.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_OUTPUT_BYTES,
        encoding: 'utf8',
        windowsHide: true,
      },
      (error, stdout, stderr) => settle(resultOf(command, error, stdout, stderr)),
    );
    let printed = 0;
    child.stdout?.on('data', (chunk: string) => {
      printed += Buffer.byteLength(chunk);
    });
    // Termux:API's scripts run `termux-api`, which forks: killed (at the timeout, or for printing too much), the
    // script leaves that child holding the output open, and the callback above would wait for it. The exit of
    // the script itself decides.
    child.once('exit', (_code, signal) => {
      if (signal !== 'SIGKILL' || settled) return;
      child.stdout?.destroy();
      child.stderr?.destroy();
      settle(printed > MAX_OUTPUT_BYTES ? tooMuch(command) : { kind: 'timeout' });
    });
  });
}

function resultOf(
  command: string,
  error: (Error & { code?: unknown; killed?: boolean; signal?: unknown }) | null,
  stdout: string,
  stderr: string,
): TermuxResult {
  if (!error) return { kind: 'done', stdout };
  if (error.code === 'ENOENT') return { kind: 'missing' };
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return tooMuch(command);
  if (error.killed || error.signal === 'SIGKILL') return { kind: 'timeout' };
  const said = firstLine(stderr) || firstLine(stdout);
  const status = typeof error.code === 'number' ? `status ${error.code}` : String(error.code ?? 'failed');
  return { kind: 'failed', detail: `${command} ended with ${status}${said ? `: ${said}` : ''}` };
}

function tooMuch(command: string): TermuxResult {
  return { kind: 'failed', detail: `${command} printed more than ${MAX_OUTPUT_BYTES} bytes` };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 200) ?? '';
}
