import {
  cpSync,
  existsSync,
  type FSWatcher,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { type Board, link, online, send, UpdateBench } from './update-bench.js';

/**
 * A power cut (or SIGKILL) at each step of the switch (docs/design.md section 12.4.3): the home is left as that
 * step leaves it, and the board must boot a complete release from it, and finish or undo the update by itself.
 * Then a real SIGKILL of a release on trial.
 */
const bench = new UpdateBench();
let board: Board | null = null;

beforeAll(() => bench.start());
afterAll(() => bench.stop());
afterEach(async () => {
  await board?.cleanup();
  board = null;
});

const V2 = '0.2.0-0123456789ab';

function trial(home: string, starts = 0): void {
  writeFileSync(
    join(home, 'update.json'),
    JSON.stringify({
      v: 1,
      phase: 'trial',
      rollout_id: 3,
      version: '0.2.0',
      from: '0.1.0-initial',
      to: V2,
      starts,
      at: 1,
    }),
  );
}

function unpacked(home: string, name = V2): void {
  cpSync(bench.trees.v2.folder, join(home, 'releases', name), { recursive: true });
}

function switched(home: string): void {
  symlinkSync(join('releases', V2), join(home, 'current.new'));
  renameSync(join(home, 'current.new'), join(home, 'current'));
}

describe('a power cut during an update', () => {
  it('while unpacking: boots the old release, and the next update clears the half-written folder', async () => {
    board = await bench.startBoard(bench.trees.v1, (home) => {
      unpacked(home, `${V2}.partial`);
      mkdirSync(join(home, 'releases', `${V2}.partial`, 'dist', 'half'), { recursive: true });
    });
    await online(board, '0.1.0');
    expect(link(board.home, 'current')).toBe('releases/0.1.0-initial');
    const { release, url } = await bench.offer(bench.trees.v2);
    await send(board, bench.updateCommand(release, url));
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(existsSync(join(board.home, 'releases', `${V2}.partial`))).toBe(false);
  });

  it('after unpacking, before update.json: boots the old release', async () => {
    board = await bench.startBoard(bench.trees.v1, (home) => unpacked(home));
    await online(board, '0.1.0');
    expect(board.state()?.update).toBeUndefined();
  });

  it('after update.json, before the link switch: boots the old release and reports the update failed', async () => {
    board = await bench.startBoard(bench.trees.v1, (home) => {
      unpacked(home);
      trial(home);
    });
    await online(board, '0.1.0');
    await waitFor(() => board?.state()?.update?.state === 'failed', 'the failure report');
    expect(link(board.home, 'current')).toBe('releases/0.1.0-initial');
  });

  it('after the link switch: boots the new release on trial and keeps it once healthy', async () => {
    board = await bench.startBoard(bench.trees.v1, (home) => {
      unpacked(home);
      trial(home);
      switched(home);
    });
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(board.state()?.version).toBe('0.2.0');
    expect(link(board.home, 'known-good')).toBe(`releases/${V2}`);
  });

  it('during the trial, killed: the next start goes on with the trial and keeps the release', async () => {
    board = await bench.startBoard(bench.trees.v1, (home) => {
      unpacked(home);
      trial(home, 1);
      switched(home);
    });
    await online(board, '0.2.0');
    await board.supervisor.kill();
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(link(board.home, 'current')).toBe(link(board.home, 'known-good'));
    const record = JSON.parse(readFileSync(join(board.home, 'update.json'), 'utf8'));
    expect(record.phase).toBe('healthy');
  });

  /**
   * The same, killed for real: the process gets SIGKILL the moment the step shows on disk (the first event
   * naming it), so it dies at that step or a little after it, never before. Whatever it reached, the board
   * boots a whole release, and the update, sent again as the cloud does, ends with the new release kept.
   */
  it.each([
    ['the download', (name: string) => name.endsWith('.tgz.partial')],
    ['the unpacking', (name: string) => name.endsWith('.partial') && !name.endsWith('.tgz.partial')],
    ['update.json', (name: string) => name === 'update.json' || name === 'update.json.new'],
    ['the switch of current', (name: string) => name === 'current.new' || name === 'current'],
  ])(
    'killed at %s: boots a whole release and finishes the update when it comes again',
    async (_step, seen) => {
      board = await bench.startBoard(bench.trees.v1);
      await online(board, '0.1.0');
      const home = board.home;
      const supervisor = board.supervisor;
      const { release, url } = await bench.offer(bench.trees.v2);
      let killed: Promise<void> | null = null;
      const watchers: FSWatcher[] = [home, join(home, 'releases')].map((folder) =>
        watch(folder, (_event, name) => {
          if (killed === null && name !== null && seen(name)) killed = supervisor.kill();
        }),
      );
      try {
        await send(board, bench.updateCommand(release, url));
        await waitFor(() => killed !== null, 'the step to show on disk');
        await killed;
      } finally {
        for (const watcher of watchers) watcher.close();
      }
      // Restarted by the supervisor: both links name a complete release, whichever step the kill hit. The
      // retained state said online until the broker saw the connection drop: wait for the new start's own.
      const killedAt = Date.now();
      await waitFor(
        () => board?.state()?.online === true && (board?.state()?.at ?? 0) >= killedAt,
        'the board back online',
      );
      for (const name of ['current', 'known-good'] as const) {
        const release = join(home, link(home, name));
        expect(existsSync(join(release, 'release.json')), `${name} -> ${release}`).toBe(true);
        expect(existsSync(join(release, 'bin', 'gatelink-device.mjs')), `${name} -> ${release}`).toBe(true);
      }
      if (board.state()?.version === '0.1.0') await send(board, bench.updateCommand(release, url));
      await waitFor(
        () => board?.state()?.version === '0.2.0' && board?.state()?.update?.state === 'healthy',
        'the update kept',
      );
      expect(link(home, 'known-good')).toBe(link(home, 'current'));
    },
  );
});
