import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCloud } from '../../cloud/admin/cloud-lookup.js';
import { recordAddress } from '../../cloud/foundation/data-folder.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';

/**
 * How `gatelink-admin` finds its cloud and token (cloud/README.md, "Operator API"; docs/design.md section 8): the
 * cloud running on the data folder, found without --url on any port, and the folder's token never sent to any
 * other.
 */
const ROOT = resolve('.');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');

/** `gatelink-admin` with only the environment given (none of this process's operator settings). */
function admin(args: string[], env: Record<string, string>): Promise<ProgramRun> {
  const {
    OPERATOR_TOKEN: _t,
    GATELINK_URL: _u,
    GATELINK_DATA_DIR: _d,
    PORT: _p,
    BASE_URL: _b,
    ...rest
  } = process.env;
  return runProgram([ADMIN, ...args], { cwd: ROOT, env: { ...rest, npm_lifecycle_event: '', ...env } });
}

/** A folder with an operator token file, as a cloud leaves it. */
function folderWithToken(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gatelink-admin-'));
  writeFileSync(join(folder, 'operator-token'), 'the-folder-token\n', { mode: 0o600 });
  return folder;
}

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

let database: TestDatabase;
let cloud: TestCloud;
let listener: Server;
let listenerUrl: string;
let listenerPort: number;
const heard: (string | undefined)[] = [];
const folders: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  listener = createServer((req, res) => {
    heard.push(req.headers.authorization);
    res.end('{}');
  });
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
  const address = listener.address();
  listenerPort = address && typeof address === 'object' ? address.port : 0;
  listenerUrl = `http://127.0.0.1:${listenerPort}`;
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await new Promise((done) => listener?.close(done));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('gatelink-admin finds its cloud', () => {
  it('through the data folder the cloud runs on, on whatever port it listens', async () => {
    const run = await admin(['device', 'list'], { GATELINK_DATA_DIR: cloud.dataDir });
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout).toContain('(none)');
  });

  it('says what to do when no cloud runs on the folder, naming the one that did', () => {
    const folder = folderWithToken();
    folders.push(folder);
    expect(() => findCloud({ env: { GATELINK_DATA_DIR: folder }, program: 'gatelink-admin' })).toThrow(
      /no cloud found: none runs on .*start one \(npm start\), or name it with --url or GATELINK_URL/,
    );
    writeFileSync(
      join(folder, 'cloud-address.json'),
      JSON.stringify({ url: listenerUrl, pid: deadPid(), started: null }),
    );
    expect(() => findCloud({ env: { GATELINK_DATA_DIR: folder }, program: 'gatelink-admin' })).toThrow(
      `the cloud that used ${folder} (at ${listenerUrl}) is not running`,
    );
  });

  it('says in one line, exit status 1, that no cloud runs on the folder', async () => {
    const folder = folderWithToken();
    folders.push(folder);
    const run = await admin(['device', 'list'], { GATELINK_DATA_DIR: folder });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining('no cloud found')]);
  });

  it('[attack:operator.token-redirect] never follows a redirect with the operator token', async () => {
    const redirector = createServer((_req, res) => {
      res.writeHead(302, { location: `${listenerUrl}/ops/devices` }).end();
    });
    await new Promise<void>((done) => redirector.listen(0, '127.0.0.1', done));
    const address = redirector.address();
    const port = address && typeof address === 'object' ? address.port : 0;
    heard.length = 0;
    try {
      const run = await admin(
        ['device', 'list', '--url', `http://127.0.0.1:${port}`, '--token', 'the-token'],
        {},
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('answered with a redirect (HTTP 302)');
      expect(heard).toEqual([]);
    } finally {
      await new Promise((done) => redirector.close(done));
    }
  });

  it('takes an address named by GATELINK_URL or the cloud own PORT, and a record of a live cloud', () => {
    const folder = folderWithToken();
    folders.push(folder);
    const named = findCloud({ env: { GATELINK_DATA_DIR: folder, GATELINK_URL: listenerUrl }, program: 'x' });
    expect(named).toEqual({ url: listenerUrl, token: 'the-folder-token' });
    const byPort = findCloud({
      env: { GATELINK_DATA_DIR: folder, PORT: '9123', OPERATOR_TOKEN: 't' },
      program: 'x',
    });
    expect(byPort).toEqual({ url: 'http://127.0.0.1:9123', token: 't' });
    const record = recordAddress(folder, listenerUrl);
    expect(findCloud({ env: { GATELINK_DATA_DIR: folder }, program: 'x' })).toEqual({
      url: listenerUrl,
      token: 'the-folder-token',
    });
    record.remove();
  });

  it("[attack:operator.token-elsewhere] never sends the folder's token to a port it only guessed or a stale record names", async () => {
    const folder = folderWithToken();
    folders.push(folder);
    const guessed = await admin(['journal'], { GATELINK_DATA_DIR: folder, PORT: String(listenerPort) });
    expect(guessed.code).not.toBe(0);
    expect(guessed.stderr).toContain('is not sent to');
    writeFileSync(
      join(folder, 'cloud-address.json'),
      JSON.stringify({ url: listenerUrl, pid: deadPid(), started: null }),
    );
    const stale = await admin(['journal'], { GATELINK_DATA_DIR: folder });
    expect(stale.code).not.toBe(0);
    expect(heard).toEqual([]);
  });
});

describe('gatelink-admin as it is typed', () => {
  it('lists the commands of a group named without one, with no cloud needed', async () => {
    const run = await admin(['company'], { GATELINK_DATA_DIR: join(tmpdir(), 'gatelink-no-such-folder') });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('gatelink-admin company <command>:');
    expect(run.stdout).toMatch(/^ {2}company approve ID +a domain company/m);
    expect(run.stdout).toMatch(/^ {2}company reject ID --reason REASON +refuse/m);
  });

  it('shows its hints as the user ran it: through npm or as gatelink-admin', async () => {
    const npm = await admin(['frobnicate'], { npm_lifecycle_event: 'admin' });
    expect(npm.stderr).toContain('Run npm run admin -- --help for the commands.');
    const direct = await admin(['frobnicate'], {});
    expect(direct.stderr).toContain('Run gatelink-admin --help for the commands.');
  });
});
