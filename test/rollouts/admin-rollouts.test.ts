import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';
import { apiController, signedRelease } from '../support/releases.js';

/**
 * `gatelink-admin release upload|list` and `rollout start|pause|resume|show|list` (docs/design.md section
 * 12.4.2), run through the compiled bin against a cloud on a real port, and `device list`'s new columns.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const releaseKey = SigningKey.generate();
let database: TestDatabase;
let cloud: TestCloud;
let folder: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 } });
  folder = mkdtempSync(join(tmpdir(), 'gatelink-release-'));
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

function admin(args: string[]): Promise<ProgramRun> {
  const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
  return runProgram([ADMIN, '--url', cloud.baseUrl, '--token', cloud.operatorToken, ...args], {
    cwd: ROOT,
    env,
  });
}

/** A bundle file and its signed manifest beside it, as `release sign` leaves them. */
function bundleFile(version: string, key = releaseKey): string {
  const bytes = randomBytes(1.5 * 1024 * 1024);
  const path = join(folder, `gatelink-device-${version}-arm64.tar.gz`);
  writeFileSync(path, bytes);
  writeFileSync(`${path}.manifest.json`, JSON.stringify(signedRelease(key, bytes, { version })));
  return path;
}

const provisionedController = () => apiController(cloud, { label: 'Yard gate' });

describe('gatelink-admin release and rollout', () => {
  it('uploads a signed bundle, lists it, and refuses one signed by another key', async () => {
    const uploaded = await admin(['release', 'upload', bundleFile('3.0.0')]);
    expect(uploaded, uploaded.stderr).toMatchObject({ code: 0 });
    expect(uploaded.stdout).toMatch(/Release \d+ stored: 3\.0\.0 for arm64/);
    const listed = await admin(['release', 'list']);
    expect(listed.stdout).toContain('3.0.0');

    const refused = await admin(['release', 'upload', bundleFile('3.0.1', SigningKey.generate())]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('release_signature_invalid');
  });

  // Ten starts of the program, each a second or two on a busy 2-core machine: more than the default's 20 s.
  it('starts, pauses, resumes and shows a rollout, and device list shows its state', {
    timeout: 60_000,
  }, async () => {
    const device = await provisionedController();
    const uploaded = await admin(['--json', 'release', 'upload', bundleFile('3.1.0')]);
    const release = (JSON.parse(uploaded.stdout) as { release: { id: number } }).release;

    const usage = await admin(['rollout', 'start', String(release.id)]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--all, --percent N or --devices');

    const started = await admin([
      'rollout',
      'start',
      String(release.id),
      '--devices',
      device,
      '--stop-at',
      '30%',
    ]);
    expect(started, started.stderr).toMatchObject({ code: 0 });
    const id = /Rollout (\d+)/.exec(started.stdout)?.[1] ?? '';
    expect(started.stdout).toContain('running');
    expect((await admin(['rollout', 'pause', id])).stdout).toContain('paused');
    expect((await admin(['rollout', 'resume', id])).stdout).toContain('running');
    const shown = await admin(['rollout', 'show', id]);
    expect(shown.stdout).toContain(device);
    expect(shown.stdout).toContain('pending');
    expect((await admin(['rollout', 'list'])).stdout).toContain('3.1.0');

    const devices = await admin(['device', 'list']);
    const header = devices.stdout.split('\n')[0] ?? '';
    for (const column of ['version', 'arch', 'last_seen', 'online', 'update'])
      expect(header).toContain(column);
    expect(devices.stdout).toContain(`pending in rollout ${id}`);
  });
});
