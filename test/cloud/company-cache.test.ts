import { describe, expect, it } from 'vitest';
import { CompanyCache } from '../../cloud/rules/call-auth/company-cache.js';
import { FakeClock } from '../support/clock.js';

/**
 * The company cache's shared reads (cloud/rules/call-auth/company-cache.ts): calls that miss together share one
 * database read while it runs, a failed read fails each of them and is not kept, and a read that ended is
 * never handed to a later call.
 */
describe('a read shared by the calls that miss together', () => {
  function deferred<T>() {
    let settle!: (value: T) => void;
    let fail!: (error: unknown) => void;
    const promise = new Promise<T>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    return { promise, settle, fail };
  }

  it('runs once for a burst of one key, and once per key', async () => {
    const cache = new CompanyCache(new FakeClock(0));
    const reads: string[] = [];
    const pending = deferred<string>();
    const read = (key: string) => () => {
      reads.push(key);
      return key === 'secrets:7' ? pending.promise : Promise.resolve(`row of ${key}`);
    };
    const burst = Array.from({ length: 20 }, () => cache.shared('secrets:7', read('secrets:7')));
    const other = await cache.shared('secrets:8', read('secrets:8'));
    pending.settle('row of 7');
    expect(await Promise.all(burst)).toEqual(Array(20).fill('row of 7'));
    expect(other).toBe('row of secrets:8');
    expect(reads).toEqual(['secrets:7', 'secrets:8']);
    // Once ended, the next call reads again: what stays is remember's alone.
    await cache.shared('secrets:7', read('secrets:7'));
    expect(reads).toEqual(['secrets:7', 'secrets:8', 'secrets:7']);
  });

  it('fails every call of the burst when the read fails, and reads again afterwards', async () => {
    const cache = new CompanyCache(new FakeClock(0));
    const pending = deferred<string>();
    let reads = 0;
    const burst = [1, 2, 3].map(() =>
      cache.shared('domain-read:example.com', () => {
        reads++;
        return pending.promise;
      }),
    );
    pending.fail(new Error('connection lost'));
    for (const call of burst) await expect(call).rejects.toThrow('connection lost');
    expect(await cache.shared('domain-read:example.com', async () => 'found')).toBe('found');
    expect(reads).toBe(1);
  });
});
