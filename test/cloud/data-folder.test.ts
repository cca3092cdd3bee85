import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CloudProcess, runCloudToExit, startCloudProcess } from '../support/cloud-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The data folder (cloud/README.md, "The data folder"): one cloud at a time on an embedded database, and
 * nothing in the folder readable by anyone but its owner. Real `npm run cloud` processes, since what is
 * tested is what a second process sees.
 */

let dir: string;
const running: CloudProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-data-folder-'));
});

afterAll(async () => {
  for (const cloud of running) await cloud.kill();
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<CloudProcess> {
  const cloud = await startCloudProcess(env);
  running.push(cloud);
  return cloud;
}

/** Every entry below `folder` whose mode lets its group or others in, with that mode. */
function openToOthers(folder: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) found.push(`${path} ${mode.toString(8)}`);
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(folder);
  return found;
}

describe('a cloud on an embedded database', { timeout: 120_000 }, () => {
  it('[attack:data.second-instance] refuses a second cloud on its data folder, naming the process that holds it', async () => {
    const data = join(dir, 'second');
    const first = await start({ GATELINK_DATA_DIR: data });

    const second = await runCloudToExit({ GATELINK_DATA_DIR: data });

    expect(second.started, second.stdout).toBe(false);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`in use by process ${first.pid}`);
    expect(lines[0]).toContain('GATELINK_DATA_DIR');
    // The first one is untouched: it still answers.
    expect((await fetch(`${first.baseUrl}/healthz`)).status).toBe(200);
    await first.stop();
  });

  it('[attack:data.second-instance] starts on a folder whose cloud was killed, and leaves no lock after a clean stop', async () => {
    const data = join(dir, 'killed');
    const killed = await start({ GATELINK_DATA_DIR: data });
    await killed.kill();
    expect(existsSync(join(data, 'cloud.pid'))).toBe(true);

    const next = await start({ GATELINK_DATA_DIR: data });
    expect((await fetch(`${next.baseUrl}/healthz`)).status).toBe(200);
    expect(await next.stop()).toBe(0);
    expect(existsSync(join(data, 'cloud.pid'))).toBe(false);
  });

  it('[attack:data.second-instance] takes over a lock whose process id now belongs to another program', async () => {
    const data = join(dir, 'reused');
    const first = await start({ GATELINK_DATA_DIR: data });
    await first.stop();
    // The pid of this test's own process: alive, but started at another time than the lock says.
    writeFileSync(
      join(data, 'cloud.pid'),
      JSON.stringify({ pid: process.pid, started: '1', since: 'earlier', command: 'npm run cloud' }),
    );

    const next = await start({ GATELINK_DATA_DIR: data });
    expect((await fetch(`${next.baseUrl}/healthz`)).status).toBe(200);
    await next.stop();
  });

  it('[attack:data.file-modes] keeps the database, operator token and keys readable by their owner only', async () => {
    const data = join(dir, 'modes');
    const cloud = await start({ GATELINK_DATA_DIR: data });
    await cloud.stop();

    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'operator-token')).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'signing-key.pem')).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(data, 'db')).length).toBeGreaterThan(0);
    expect(openToOthers(data)).toEqual([]);
  });

  it('generates an operator token a command line takes as it is: never led by a dash, and recognisable', async () => {
    const data = join(dir, 'token');
    const cloud = await start({ GATELINK_DATA_DIR: data });
    await cloud.stop();

    expect(readFileSync(join(data, 'operator-token'), 'utf8')).toMatch(/^glop_[A-Za-z0-9_-]{43}\n$/);
  });

  it('[attack:data.file-modes] tightens a data folder left open by an earlier version', async () => {
    const data = join(dir, 'loose');
    const cloud = await start({ GATELINK_DATA_DIR: data });
    await cloud.stop();
    chmodSync(data, 0o755);
    chmodSync(join(data, 'operator-token'), 0o666);
    chmodSync(join(data, 'db'), 0o777);

    const again = await start({ GATELINK_DATA_DIR: data });
    await again.stop();

    expect(openToOthers(data)).toEqual([]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('cloud instances on PostgreSQL', { timeout: 120_000 }, () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.close();
  });

  it('share one data folder, as instances sharing a database share their key files', async () => {
    const data = join(dir, 'shared');
    const env = { GATELINK_DATA_DIR: data, DATABASE_URL: database.url! };
    const first = await start(env);
    const second = await start(env);

    expect((await fetch(`${first.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${second.baseUrl}/healthz`)).status).toBe(200);
    await second.stop();
    await first.stop();
  });
});
