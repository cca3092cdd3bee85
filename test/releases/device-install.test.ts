import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { create } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { injectRelease, signedRelease } from '../support/releases.js';

/**
 * A fresh board installs the controller from the operator's cloud (docs/design.md section 12.4.4): the script at
 * /api/device/install, the release rolled out to every controller at /api/device/releases/latest/<arch>, and its
 * bundle, public and streamed, at most PUBLIC_DOWNLOADS_AT_ONCE at a time. The script runs here for real, with
 * curl against this cloud, and stand-ins only for what would change this machine: apt-get, the root check, and
 * the release's installer (a `bash` that notes what it was asked to run).
 */
const run = promisify(execFile);
const releaseKey = SigningKey.generate();
let database: TestDatabase;
let cloud: TestCloud;
let work: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 } });
  work = mkdtempSync(join(tmpdir(), 'gatelink-install-'));
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A bundle holding a release tree with its installer, as `npm run release:device` packs one. */
async function bundle(version: string, padding = 0): Promise<Buffer> {
  const tree = join(work, `tree-${version}`);
  const files: Record<string, string | Buffer> = {
    'release.json': JSON.stringify({ name: 'gatelink-device', version, arch: 'x64', node_abi: '115' }),
    'bin/gatelink-device.mjs': '// the controller\n',
    'hardware/install.sh': '# the release installer\n',
    'padding.bin': randomBytes(padding),
  };
  for (const [path, content] of Object.entries(files)) {
    const file = join(tree, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, content);
  }
  const out = `${tree}.tar.gz`;
  await create({ gzip: true, file: out, cwd: tree, portable: true }, Object.keys(files));
  return readFileSync(out);
}

function upload(bytes: Buffer, version: string): Promise<number> {
  return injectRelease(cloud, bytes, signedRelease(releaseKey, bytes, { version, arch: 'x64' }));
}

async function rollOut(releaseId: number, target: unknown = 'all'): Promise<number> {
  const answer = await cloud.ops('POST', '/ops/rollouts', { release_id: releaseId, target });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return (answer.body.rollout as { id: number }).id;
}

async function latest() {
  const response = await fetch(`${cloud.localUrl}/api/device/releases/latest/x64`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs the served script with stand-ins for apt-get, id and the release's installer. */
async function runScript(overrides: Record<string, string> = {}) {
  const script = await (await fetch(`${cloud.localUrl}/api/device/install`)).text();
  const bin = mkdtempSync(join(work, 'bin-'));
  const noted = join(bin, 'installer-ran');
  const standIns: Record<string, string> = {
    'apt-get': '#!/bin/sh\nexit 0\n',
    id: '#!/bin/sh\necho 0\n',
    uname: '#!/bin/sh\necho x86_64\n',
    bash: `#!/bin/sh\necho "$1" >${noted}\nls "$(dirname "$1")/.." | sort >>${noted}\n`,
    ...overrides,
  };
  for (const [name, body] of Object.entries(standIns)) {
    writeFileSync(join(bin, name), body);
    chmodSync(join(bin, name), 0o755);
  }
  const scriptFile = join(bin, 'install.sh');
  writeFileSync(scriptFile, script);
  const result = await run('sh', [scriptFile], {
    env: { PATH: `${bin}:${process.env.PATH}`, TMPDIR: work },
  }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  let installer = '';
  try {
    installer = readFileSync(noted, 'utf8');
  } catch {
    // The installer never ran.
  }
  return { ...result, installer, script };
}

describe('installing a board from the cloud', () => {
  it('has no release to give until one is rolled out to all controllers', async () => {
    expect(await latest()).toMatchObject({ status: 404, body: { error: 'release_not_found' } });
    const only = await upload(await bundle('0.9.0'), '0.9.0');
    expect((await latest()).status).toBe(404);
    await rollOut(only, { percent: 50 });
    expect((await latest()).status).toBe(404);
  });

  it('gives the newest release rolled out to all, with its signed manifest and a public address', async () => {
    const older = await upload(await bundle('1.0.0'), '1.0.0');
    const newer = await upload(await bundle('1.1.0'), '1.1.0');
    await rollOut(newer);
    await rollOut(older);
    const answer = await latest();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      release: { id: newer, version: '1.1.0', arch: 'x64' },
      manifest: { manifest: { version: '1.1.0' } },
      url: `${cloud.baseUrl}/api/device/releases/${newer}/release.tar.gz`,
    });
    const paused = await cloud.ops('GET', '/ops/rollouts');
    const newest = (paused.body.rollouts as { id: number; release_id: number }[]).find(
      (rollout) => rollout.release_id === newer,
    );
    await cloud.ops('POST', `/ops/rollouts/${newest?.id}/pause`);
    expect((await latest()).body).toMatchObject({ release: { version: '1.0.0' } });
    await cloud.ops('POST', `/ops/rollouts/${newest?.id}/resume`);
  });

  it('serves a script that fetches the release, checks its hash, unpacks it and runs its own installer', async () => {
    const ran = await runScript();
    expect(ran.script).toContain(`cloud='${cloud.baseUrl}'`);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('gatelink-device 1.1.0');
    const [installer, ...unpacked] = ran.installer.trim().split('\n');
    expect(installer).toMatch(/\/release\/hardware\/install\.sh$/);
    expect(unpacked).toEqual(['bin', 'hardware', 'padding.bin', 'release.json']);
  });

  it('stops before unpacking a bundle that does not match the release, and says what to do [attack:device.bundle-tampered]', async () => {
    const ran = await runScript({ sha256sum: '#!/bin/sh\necho 0000 "$1"\n' });
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain("the bundle does not match the release's SHA-256");
    expect(ran.installer).toBe('');
  });

  it('refuses a board whose CPU no release is built for', async () => {
    const ran = await runScript({ uname: '#!/bin/sh\necho armv7l\n' });
    expect(ran.stderr).toContain('needs the 64-bit Raspberry Pi OS');
    expect(ran.installer).toBe('');
  });

  it('serves the bundle to at most four public downloads at once; the fifth is told to retry [attack:web.release-download-flood]', async () => {
    const big = await upload(await bundle('2.0.0', 8 * 1024 * 1024), '2.0.0');
    const open: IncomingMessage[] = [];
    const get = () =>
      new Promise<IncomingMessage>((done, fail) => {
        httpRequest(`${cloud.localUrl}/api/device/releases/${big}/release.tar.gz`, done)
          .on('error', fail)
          .end();
      });
    // Four slow readers: they take the headers and read nothing.
    for (let i = 0; i < 4; i++) {
      const response = await get();
      expect(response.statusCode).toBe(200);
      response.pause();
      open.push(response);
    }
    const fifth = await get();
    expect(fifth.statusCode).toBe(503);
    expect(fifth.headers['retry-after']).toBe('30');
    fifth.resume();
    for (const response of open) response.destroy();
    // A reader that went away frees its place.
    await expect
      .poll(async () => {
        const again = await get();
        again.resume();
        return again.statusCode;
      })
      .toBe(200);
  });
});
