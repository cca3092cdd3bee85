import { describe, expect, it } from 'vitest';
import { Lifecycle, type Part, StartFailed, StopFailed } from '../../shared/lifecycle/lifecycle.js';

/**
 * The one start/stop order of the cloud, the controller daemon and its drivers (shared/lifecycle/lifecycle.ts):
 * started in order, stopped in reverse, unwound when a part fails to start, every part stopped even when one
 * fails to stop.
 */
function recorded(log: string[], name: string, fails: { start?: boolean; stop?: boolean } = {}): Part {
  return {
    name,
    async start() {
      if (fails.start) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    async stop() {
      if (fails.stop) throw new Error(`${name} cannot stop`);
      log.push(`stop ${name}`);
    },
  };
}

describe('Lifecycle', () => {
  it('starts the parts in order and stops them in reverse, once', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle(['folder', 'database', 'link'].map((name) => recorded(log, name)));
    await lifecycle.start();
    await lifecycle.stop();
    await lifecycle.stop();
    expect(log).toEqual([
      'start folder',
      'start database',
      'start link',
      'stop link',
      'stop database',
      'stop folder',
    ]);
  });

  it('stops what had started, in reverse, when one fails to start, and names the part that failed', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([
      recorded(log, 'folder'),
      recorded(log, 'database'),
      recorded(log, 'link', { start: true }),
      recorded(log, 'server'),
    ]);
    const failure = await lifecycle.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StartFailed);
    expect((failure as StartFailed).message).toBe('link failed to start: link cannot start');
    expect((failure as StartFailed).part).toBe('link');
    expect(((failure as StartFailed).cause as Error).message).toBe('link cannot start');
    expect(log).toEqual(['start folder', 'start database', 'stop database', 'stop folder']);
    // Nothing is left to stop.
    await lifecycle.stop();
    expect(log).toHaveLength(4);
  });

  it('unwinds past a part that fails to stop while another failed to start, and reports both', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([
      recorded(log, 'folder'),
      recorded(log, 'database', { stop: true }),
      recorded(log, 'link', { start: true }),
    ]);
    const failure = (await lifecycle.start().catch((error: unknown) => error)) as StartFailed;
    expect(failure.part).toBe('link');
    expect(failure.unwinding.map((each) => each.part)).toEqual(['database']);
    expect(log).toEqual(['start folder', 'start database', 'stop folder']);
  });

  it('stops every part even when some fail to stop, and reports all the failures at the end', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([
      recorded(log, 'folder'),
      recorded(log, 'database', { stop: true }),
      recorded(log, 'link'),
      recorded(log, 'server', { stop: true }),
    ]);
    await lifecycle.start();
    const failure = (await lifecycle.stop().catch((error: unknown) => error)) as StopFailed;
    expect(failure).toBeInstanceOf(StopFailed);
    expect(failure.failures.map((each) => each.part)).toEqual(['server', 'database']);
    expect(failure.message).toBe(
      'failed to stop: server (server cannot stop), database (database cannot stop)',
    );
    expect(log).toEqual([
      'start folder',
      'start database',
      'start link',
      'start server',
      'stop link',
      'stop folder',
    ]);
  });

  it('starts nothing twice and stops nothing that never started', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([recorded(log, 'only', { start: true })]);
    await expect(lifecycle.start()).rejects.toThrow('only failed to start');
    await lifecycle.stop();
    expect(log).toEqual([]);
  });
});
