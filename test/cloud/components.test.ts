import { describe, expect, it } from 'vitest';
import { type Component, startInOrder } from '../../cloud/components.js';

/** The cloud's composition (cloud/components.ts): started in order, stopped in reverse, unwound on a failure. */
function recorded(log: string[], name: string, fail = false): Component {
  return {
    name,
    async start() {
      if (fail) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  };
}

describe('startInOrder', () => {
  it('starts the components in order and stops them in reverse, once', async () => {
    const log: string[] = [];
    const stop = await startInOrder(['folder', 'database', 'broker'].map((name) => recorded(log, name)));
    await stop();
    await stop();
    expect(log).toEqual([
      'start folder',
      'start database',
      'start broker',
      'stop broker',
      'stop database',
      'stop folder',
    ]);
  });

  it('stops what had started, in reverse, when one fails to start, and passes the failure on', async () => {
    const log: string[] = [];
    const starting = startInOrder([
      recorded(log, 'folder'),
      recorded(log, 'database'),
      recorded(log, 'broker', true),
      recorded(log, 'server'),
    ]);
    await expect(starting).rejects.toThrow('broker cannot start');
    expect(log).toEqual(['start folder', 'start database', 'stop database', 'stop folder']);
  });
});
