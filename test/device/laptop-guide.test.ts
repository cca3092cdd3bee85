import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * hardware/README.md, "Try it on a laptop", followed as written: its commands are read from the guide and run in
 * order, with what the guide tells the reader to fill in (the code `device add` printed) and this cloud's
 * address in place of http://localhost:8080. `npm run admin --` and `npm run device --` are the programs they
 * run (bin/), started directly to save npm's start-up.
 */
const ROOT = resolve('.');
const PROGRAMS: Record<string, string> = {
  'npm run admin --': resolve(ROOT, 'bin/gatelink-admin.mjs'),
  'npm run device --': resolve(ROOT, 'bin/gatelink-device.mjs'),
};
const run = promisify(execFile);

/** The guide's commands for the second terminal: every `npm run admin|device -- ...` line of its sh blocks. */
function guideCommands(): string[] {
  const readme = readFileSync(resolve(ROOT, 'hardware/README.md'), 'utf8');
  const start = readme.indexOf('## Try it on a laptop');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks
    .flatMap((block) => block.replaceAll('\\\n', ' ').split('\n'))
    .map((line) => line.trim())
    .filter((line) => /^npm run (admin|device) -- /.test(line));
}

/** Shell words of a guide line: plain words and double-quoted ones, which is all the guide uses. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

let database: TestDatabase;
let cloud: TestCloud;
let home: string;
let daemon: ChildProcess | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  home = await mkdtemp(join(tmpdir(), 'gatelink-laptop-'));
});

afterAll(async () => {
  daemon?.kill('SIGKILL');
  await cloud?.stop();
  await database?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('the hardware guide, "Try it on a laptop"', () => {
  it('works as written: add, provision, test, run', async () => {
    const commands = guideCommands();
    expect(commands.map((line) => words(line).slice(0, 5).join(' '))).toEqual([
      'npm run admin -- device',
      'npm run device -- provision',
      'npm run device -- test',
      'npm run device -- run',
    ]);
    const env = { ...process.env, GATELINK_URL: cloud.baseUrl, OPERATOR_TOKEN: cloud.operatorToken };
    let code = '';
    const argv = (line: string) => {
      const filled = line
        .replaceAll('<code>', code)
        .replaceAll('http://localhost:8080', cloud.baseUrl)
        .replaceAll('~/', `${home}/`);
      const all = words(filled);
      const program = PROGRAMS[all.slice(0, 4).join(' ')];
      const rest = all.slice(4);
      if (!program) throw new Error(`not a program of the guide: ${line}`);
      return [program, ...rest];
    };
    const [add, provision, test, daemonLine] = commands as [string, string, string, string];

    const added = await run(process.execPath, argv(add), { cwd: ROOT, env });
    code = /Provisioning code: (\S+)/.exec(added.stdout)?.[1] ?? '';
    expect(code, added.stdout).not.toBe('');

    const provisioned = await run(process.execPath, argv(provision), { cwd: ROOT, env });
    expect(provisioned.stdout).toMatch(/Pairing code for the customer: [0-9A-Z]{4}-[0-9A-Z]{4}\n/);
    expect(provisioned.stdout).toContain(`run --config ${home}/gatelink-try/device.yaml`);

    const tested = await run(process.execPath, argv(test), { cwd: ROOT, env });
    expect(tested.stdout).toContain('All objects opened.');
    // The command stays up until the simulated gate is seen moving, 1.5 s after its pulse.
    expect(tested.stdout).toMatch(/^gate \(Laptop gate\): gate seen open after 1\.\d s$/m);

    let output = '';
    daemon = spawn(process.execPath, argv(daemonLine), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await waitFor(() => output.includes('mqtt: connected'), 'the daemon to connect', 60_000);
    const devices = await cloud.ops('GET', '/ops/devices');
    expect(devices.body.devices).toEqual([
      expect.objectContaining({ label: 'My laptop', provisioned: true }),
    ]);

    const exited = new Promise<number | null>((done) => daemon?.once('exit', done));
    daemon.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('stopped, outputs released');
    daemon = null;
  });
});
