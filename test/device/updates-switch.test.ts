import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { waitFor } from '../support/wait-for.js';
import { type Board, link, online, send, UpdateBench } from './update-bench.js';

/**
 * Updates over the air with the compiled daemon (docs/design.md section 12.4.3): a home as install.sh leaves
 * it, the boot guard of `known-good` started by a supervisor that restarts it like systemd, a real broker, and
 * bundles served only to calls the device signed.
 */
const bench = new UpdateBench();
let board: Board | null = null;

beforeAll(() => bench.start());
afterAll(() => bench.stop());
afterEach(async () => {
  await board?.cleanup();
  board = null;
});

describe('updates over the air on the controller', () => {
  it('moves from v1 to v2, keeps v2 once healthy and reports it', async () => {
    board = await bench.startBoard(bench.trees.v1);
    await online(board, '0.1.0');
    expect(board.state()?.arch).toBe(process.arch);
    const { release, url } = await bench.offer(bench.trees.v2);
    await send(board, bench.updateCommand(release, url));
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(board.state()).toMatchObject({ version: '0.2.0', update: { rollout_id: 7, version: '0.2.0' } });
    expect(link(board.home, 'current')).toBe(link(board.home, 'known-good'));
    expect(link(board.home, 'current')).toMatch(/^releases\/0\.2\.0-[0-9a-f]{12}$/);
    const record = JSON.parse(readFileSync(join(board.home, 'update.json'), 'utf8'));
    expect(record).toMatchObject({ phase: 'healthy', version: '0.2.0', from: '0.1.0-initial' });
    // The same rollout's command again (the cloud sending it once more) leaves the report the cloud counts.
    await send(board, bench.updateCommand(release, url));
    await waitFor(() => board?.supervisor.output().includes('already ran') === true, 'the repeat ignored');
    expect(board.state()?.update?.state).toBe('healthy');
  });

  it('rolls a release that crashes at every start back to the known-good one by itself, and says so', async () => {
    board = await bench.startBoard(bench.trees.v2);
    await online(board, '0.2.0');
    const { release, url } = await bench.offer(bench.trees.v3);
    await send(board, bench.updateCommand(release, url));
    await waitFor(
      () => board?.state()?.update?.state === 'rolled_back' && board.state()?.online === true,
      'the roll-back report',
    );
    expect(board.state()).toMatchObject({
      version: '0.2.0',
      update: { version: '0.3.0', state: 'rolled_back', reason: 'crashed' },
    });
    expect(link(board.home, 'current')).toBe('releases/0.2.0-initial');
    expect(link(board.home, 'known-good')).toBe('releases/0.2.0-initial');
  });

  it('refuses a tampered bundle (hash_mismatch) and keeps running the release it had [attack:device.bundle-tampered]', async () => {
    board = await bench.startBoard(bench.trees.v1);
    await online(board, '0.1.0');
    const { bytes, release } = await bench.offer(bench.trees.v2);
    const tampered = Buffer.from(bytes);
    tampered[tampered.length - 10] = (tampered[tampered.length - 10] ?? 0) ^ 0xff;
    await send(board, bench.updateCommand(release, bench.serve(tampered)));
    await waitFor(() => board?.state()?.update?.state === 'failed', 'the failure report');
    expect(board.state()?.update?.reason).toBe('hash_mismatch');
    expect(link(board.home, 'current')).toBe('releases/0.1.0-initial');
  });

  it.each([
    ['a manifest signed by another key', 'bad_release_signature', '[attack:device.release-forged]'],
    ['an older version', 'older_version', '[attack:device.release-rollback]'],
    ['the same version', 'same_version', ''],
    ['another architecture', 'wrong_arch', '[attack:device.release-wrong-arch]'],
    ['a command signed by another key', 'bad_signature', '[attack:device.update-forged]'],
    ['a bundle on another origin', 'foreign_url', '[attack:device.bundle-elsewhere]'],
  ] as const)('refuses %s (%s) %s', async (what, reason, _attack) => {
    const { v1, v2, v3 } = bench.trees;
    board = await bench.startBoard(v2);
    await online(board, '0.2.0');
    const arch = process.arch === 'arm64' ? 'x64' : 'arm64';
    const tree = what === 'an older version' ? v1 : what === 'the same version' ? v2 : v3;
    const { release, url } = await bench.offer(
      tree,
      what === 'another architecture' ? { arch } : {},
      what === 'a manifest signed by another key' ? SigningKey.generate() : bench.releaseKey,
    );
    const target = what === 'a bundle on another origin' ? url.replace('127.0.0.1', 'localhost') : url;
    const key = what === 'a command signed by another key' ? SigningKey.generate() : bench.cloudKey;
    await send(board, bench.updateCommand(release, target, {}, key));
    await waitFor(() => board?.state()?.update?.state === 'refused', 'the refusal report');
    expect(board.state()?.update?.reason).toBe(reason);
    expect(link(board.home, 'current')).toBe('releases/0.2.0-initial');
  });

  it('takes an older release when the operator marked the rollout a downgrade', async () => {
    board = await bench.startBoard(bench.trees.v2);
    await online(board, '0.2.0');
    const { release, url } = await bench.offer(bench.trees.v1);
    await send(board, bench.updateCommand(release, url, { allow_downgrade: true }));
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(board.state()?.version).toBe('0.1.0');
    expect(existsSync(join(board.home, 'releases', '0.2.0-initial'))).toBe(true);
  });
});
