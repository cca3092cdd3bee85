import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../support/wait-for.js';

/** The modem suites need socat for their pseudo-terminal pair (README.md, "Test it"). */
export const hasSocat = spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;

/** A pseudo-terminal pair made by socat: the simulated modem opens one end, the driver the other. */
export class PtyPair {
  readonly modem: string;
  readonly host: string;
  #process: ChildProcess | null = null;

  constructor(dir: string) {
    this.modem = join(dir, 'modem');
    this.host = join(dir, 'host');
  }

  async start(): Promise<void> {
    this.#process = spawn(
      'socat',
      ['-d', '-d', `pty,raw,echo=0,link=${this.modem}`, `pty,raw,echo=0,link=${this.host}`],
      { stdio: 'ignore' },
    );
    await waitFor(() => existsSync(this.modem) && existsSync(this.host), 'socat to create the pty pair');
  }

  /** Ends socat: both ends of the pair disappear, as when a USB modem is unplugged. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}
