import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  admin,
  type FleetDevice,
  fleet,
  type GuardedController,
  packAndSign,
  releaseKeygen,
  scrapeMetrics,
  startGuardedController,
  startRollout,
  succeeded,
  uploadRelease,
} from '../support/guarded-controller.js';
import { parseSamples, sampleValue } from '../support/prometheus-text.js';
import { makeHome, type ReleaseTree } from '../support/release-home.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Updates over the air on the Raspberry Pi's architecture (docs/design.md section 12.4): a real arm64 tree of
 * `npm run build:device -- <folder> --arch arm64` (its GPIO module cross-compiled) installed in a home, the
 * controller provisioned and run through its boot guard by the arm64 Node.js under qemu-user, started again by a
 * supervisor as systemd would; it takes a signed arm64 release and rolls a crashing one back by itself.
 * `.ci/run` installs qemu-user-static, the arm64 C libraries and the cross compiler, test/arm64/fetch-node.sh
 * the Node.js.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ARM_NODE = process.env.GATELINK_ARM64_NODE ?? resolve(ROOT, '.cache/arm64/bin/node');
const QEMU = spawnSync('sh', ['-c', 'command -v qemu-aarch64-static'], { encoding: 'utf8' }).stdout.trim();
const CROSS = spawnSync('sh', ['-c', 'command -v aarch64-linux-gnu-g++'], { encoding: 'utf8' }).stdout.trim();
const missing = !QEMU
  ? 'qemu-aarch64-static (apt-get install qemu-user-static libc6:arm64 libstdc++6:arm64)'
  : !existsSync(ARM_NODE)
    ? `the arm64 Node.js at ${ARM_NODE} (bash test/arm64/fetch-node.sh)`
    : !CROSS
      ? 'the cross compiler aarch64-linux-gnu-g++ (apt-get install g++-aarch64-linux-gnu)'
      : null;
if (missing) console.log(`arm64 update suite skipped: it needs ${missing}`);

/** Emulation runs several times slower than this machine: bounds on waiting only, never on how long it took. */
const EMULATED = 150_000;
const run = promisify(execFile);

let database: TestDatabase;
let cloud: TestCloud;
let dir: string;
let bundles: { good: string; broken: string };
let controller: GuardedController | null = null;

/** The built tree again as `version`: package.json and release.json say so; `crash` makes its daemon throw. */
function renamedTree(built: ReleaseTree, version: string, crash = false): ReleaseTree {
  const folder = join(dir, `tree-${version}`);
  cpSync(built.folder, folder, { recursive: true, verbatimSymlinks: true });
  for (const file of ['package.json', 'release.json']) {
    const path = join(folder, file);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), version }, null, 2));
  }
  if (crash)
    writeFileSync(join(folder, 'dist', 'device', 'main.js'), "throw new Error('this release is broken');\n");
  return { folder, version };
}

/** Whether the controller shows online to the operator, and `check` holds of what they see of it. */
async function seen(check: (device: FleetDevice) => boolean): Promise<boolean> {
  const [device] = await fleet(cloud);
  return device?.online === true && check(device);
}

describe.skipIf(missing !== null)(
  'updates over the air on arm64 (qemu-user)',
  { timeout: EMULATED * 2 },
  () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatelink-update-arm64-'));
      const first: ReleaseTree = { folder: join(dir, 'tree-0.1.0'), version: '0.1.0' };
      // Against the board's Node.js headers (the arm64 Node.js 20's own), whatever Node.js runs this suite.
      await run('npm', ['run', 'build:device', '--', first.folder, '--arch', 'arm64'], {
        cwd: ROOT,
        timeout: 300_000,
        env: { ...process.env, npm_config_nodedir: dirname(dirname(ARM_NODE)) },
      });
      const key = await releaseKeygen(dir);
      bundles = {
        good: await packAndSign(renamedTree(first, '0.2.0'), dir, key.keyFile),
        broken: await packAndSign(renamedTree(first, '0.3.0', true), dir, key.keyFile),
      };
      database = await createTestDatabase();
      cloud = await startTestCloud({
        database,
        env: { RELEASE_PUBLIC_KEY: key.publicKey },
        updateDelivery: { intervalMs: 200 },
      });
      const own = mkdtempSync(join(dir, 'controller-'));
      controller = await startGuardedController(cloud, own, makeHome(own, first), {
        label: 'Pi gate',
        node: [QEMU, ARM_NODE],
        timeoutMs: EMULATED,
      });
      await waitFor(
        () => seen((device) => device.version === '0.1.0' && device.arch === 'arm64'),
        'the arm64 controller online on 0.1.0',
        EMULATED,
      );
    }, 420_000);

    afterAll(async () => {
      await controller?.supervisor.stop();
      await cloud?.stop();
      await database?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('takes a signed arm64 release and reports it healthy', async () => {
      const release = await uploadRelease(cloud, bundles.good);
      const rollout = await startRollout(cloud, release, ['--all']);
      await waitFor(
        () => seen((device) => device.version === '0.2.0' && device.update?.state === 'healthy'),
        'the arm64 controller healthy on 0.2.0',
        EMULATED,
      );
      const listed = succeeded(await admin(cloud, ['device', 'list']));
      const line = listed.stdout.split('\n').find((row) => row.includes(controller?.board.deviceId ?? '?'));
      expect(line).toContain('0.2.0');
      expect(line).toContain('arm64');
      expect(line).toContain(`healthy in rollout ${rollout}`);
    });

    it('rolls a crashing release back to the one before by itself, reports why, and the rollout halts', async () => {
      const release = await uploadRelease(cloud, bundles.broken);
      const rollout = await startRollout(cloud, release, ['--all']);
      await waitFor(
        () =>
          seen(
            (device) =>
              device.version === '0.2.0' &&
              device.update?.rollout_id === rollout &&
              device.update.state === 'rolled_back',
          ),
        'the arm64 controller rolled back to 0.2.0',
        EMULATED,
      );
      const listed = succeeded(await admin(cloud, ['device', 'list']));
      expect(listed.stdout).toContain(`rolled_back (crashed) in rollout ${rollout}`);
      const shown = succeeded(await admin(cloud, ['rollout', 'show', String(rollout)]));
      expect(shown.stdout).toMatch(
        new RegExp(`Rollout ${rollout}: release ${release} \\(0\\.3\\.0, arm64\\), halted`),
      );
      const samples = parseSamples(await scrapeMetrics(cloud));
      expect(
        sampleValue(samples, 'gatelink_update_reports_total', { state: 'rolled_back', reason: 'crashed' }),
      ).toBe(1);
      expect(sampleValue(samples, 'gatelink_update_reports_total', { state: 'healthy' })).toBe(1);
    });
  },
);
