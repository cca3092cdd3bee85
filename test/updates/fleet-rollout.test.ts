import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProvisionedBoard } from '../support/board-opening.js';
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
import { makeHome, makeReleaseTree } from '../support/release-home.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Updates over the air from end to end (docs/design.md section 12.4): the operator makes a release key, packs,
 * signs and uploads releases and rolls them out with the compiled programs; three controllers, each in its own
 * home, provisioned with `gatelink-device provision` (pinning the release key) and run through their boot guard
 * by a supervisor as systemd would, take a good release and stay on it, and roll a crashing one back by
 * themselves, which halts the rollout.
 */
const FLEET = 3;
/** Several controllers start, download and restart at once on a busy machine: a bound, never a measure. */
const FLEET_WAIT = 90_000;

let database: TestDatabase;
let cloud: TestCloud;
let dir: string;
let bundles: { good: string; broken: string };
let releasePublicKey: string;
const controllers: GuardedController[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-fleet-'));
  const key = await releaseKeygen(dir);
  releasePublicKey = key.publicKey;
  const trees = {
    first: makeReleaseTree(dir, '0.1.0'),
    good: makeReleaseTree(dir, '0.2.0'),
    broken: makeReleaseTree(dir, '0.3.0', { crashAtStart: true }),
  };
  bundles = {
    good: await packAndSign(trees.good, dir, key.keyFile),
    broken: await packAndSign(trees.broken, dir, key.keyFile),
  };
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    env: { RELEASE_PUBLIC_KEY: key.publicKey },
    updateDelivery: { intervalMs: 50 },
  });
  for (let index = 0; index < FLEET; index += 1) {
    const own = mkdtempSync(join(dir, `controller-${index}-`));
    const home = makeHome(own, trees.first);
    controllers.push(await startGuardedController(cloud, own, home, { label: `Gate ${index + 1}` }));
  }
  await waitFor(
    async () =>
      (await fleet(cloud)).filter((device) => device.online && device.version === '0.1.0').length === FLEET,
    'the fleet online on 0.1.0',
    FLEET_WAIT,
  );
}, 180_000);

afterAll(async () => {
  for (const controller of controllers) await controller.supervisor.stop();
  await cloud?.stop();
  await database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The lines of `device list` that name the fleet's controllers. */
async function deviceListLines(): Promise<string[]> {
  const listed = succeeded(await admin(cloud, ['device', 'list']));
  return controllers.map(
    (controller) =>
      listed.stdout.split('\n').find((line) => line.includes(controller.board.deviceId ?? '?')) ?? '',
  );
}

describe('a fleet updated over the air', { timeout: 180_000 }, () => {
  let goodRollout = 0;

  it('takes a signed release rolled out to all, reports it healthy, and still opens', async () => {
    for (const controller of controllers) {
      expect(readFileSync(controller.config, 'utf8')).toContain(`release_key: ${releasePublicKey}`);
    }
    const release = await uploadRelease(cloud, bundles.good);
    goodRollout = await startRollout(cloud, release, ['--all']);
    const healthy = (device: FleetDevice) =>
      device.online && device.version === '0.2.0' && device.update?.state === 'healthy';
    await waitFor(
      async () => (await fleet(cloud)).filter(healthy).length === FLEET,
      'the fleet healthy on 0.2.0',
      FLEET_WAIT,
    );
    for (const line of await deviceListLines()) {
      expect(line).toContain('0.2.0');
      expect(line).toContain(process.arch);
      expect(line).toContain(`healthy in rollout ${goodRollout}`);
    }
    const shown = succeeded(await admin(cloud, ['rollout', 'show', String(goodRollout)]));
    expect(shown.stdout).toContain(`healthy ${FLEET}`);

    const board = controllers[0]?.board;
    if (!board) throw new Error('no controller started');
    const opened = await openProvisionedBoard(cloud, board, {
      owner: 'Fleet owner',
      actor: 'Driver after the update',
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toMatchObject({ ok: 1 });
  });

  it('rolls a crashing release back by itself on every controller that got it, and the rollout halts', async () => {
    const release = await uploadRelease(cloud, bundles.broken);
    const broken = await startRollout(cloud, release, ['--all', '--stop-at', '30%']);
    const settled = async () => {
      const shown = (await cloud.ops('GET', `/ops/rollouts/${broken}`)).body.rollout as { state: string };
      const devices = await fleet(cloud);
      return (
        shown.state === 'halted' &&
        devices.every((device) => device.online && device.version === '0.2.0') &&
        devices.some((device) => device.update?.rollout_id === broken) &&
        devices.every(
          (device) => device.update?.rollout_id !== broken || device.update.state === 'rolled_back',
        )
      );
    };
    await waitFor(settled, 'the roll-backs and the halt', FLEET_WAIT);

    const lines = await deviceListLines();
    const rolledBack = lines.filter((line) => line.includes(`rolled_back (crashed) in rollout ${broken}`));
    expect(rolledBack.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toContain('0.2.0');
      expect(line).not.toContain('0.3.0');
    }
    const shown = succeeded(await admin(cloud, ['rollout', 'show', String(broken)]));
    expect(shown.stdout).toMatch(
      new RegExp(`Rollout ${broken}: release ${release} \\(0\\.3\\.0, ${process.arch}\\), halted`),
    );
    expect(shown.stdout).toContain('crashed');

    const samples = parseSamples(await scrapeMetrics(cloud));
    expect(
      sampleValue(samples, 'gatelink_update_reports_total', { state: 'healthy' }),
    ).toBeGreaterThanOrEqual(FLEET);
    expect(
      sampleValue(samples, 'gatelink_update_reports_total', { state: 'rolled_back', reason: 'crashed' }),
    ).toBeGreaterThanOrEqual(rolledBack.length);
    expect(sampleValue(samples, 'gatelink_rollouts_halted_total')).toBe(1);
  });
});
