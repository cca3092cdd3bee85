import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitFor } from '../support/wait-for.js';

/** Node cannot bind a Unix datagram socket, so the receiving end is a few lines of Python. */
export const hasPython = spawnSync('python3', ['-c', 'import socket'], { stdio: 'ignore' }).status === 0;

const RECEIVER = `
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps("bound"), flush=True)
while True:
    print(json.dumps(s.recv(65536).decode()), flush=True)
`;

/**
 * The manager's end of $NOTIFY_SOCKET: every datagram received, as its list of assignments. systemd-notify's
 * BARRIER=1 (its wait for the manager to have read the message) is left out; the receiver closes the descriptor
 * that comes with it by not reading it, which is what releases the sender.
 */
export class NotifyListener {
  readonly messages: string[][] = [];
  readonly #child: ChildProcess;

  private constructor(child: ChildProcess) {
    this.#child = child;
  }

  static async open(path: string): Promise<NotifyListener> {
    const child = spawn('python3', ['-c', RECEIVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const listener = new NotifyListener(child);
    let bound = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const text = JSON.parse(line) as string;
      if (text === 'bound') bound = true;
      else if (text !== 'BARRIER=1') listener.messages.push(text.split('\n'));
    });
    await waitFor(() => bound, 'the notify socket to be bound');
    return listener;
  }

  /** Every assignment received, in order, flattened. */
  get assignments(): string[] {
    return this.messages.flat();
  }

  async received(assignment: string | RegExp, what = String(assignment)): Promise<void> {
    const matches = (line: string) =>
      typeof assignment === 'string' ? line === assignment : assignment.test(line);
    await waitFor(() => this.assignments.some(matches), what);
  }

  async close(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.kill('SIGTERM');
    await exited;
  }
}
