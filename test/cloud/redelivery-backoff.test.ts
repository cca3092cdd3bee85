import { describe, expect, it } from 'vitest';
import { REDELIVERY_DELAYS, RedeliveryBackoff } from '../../cloud/links/controllers/redelivery-backoff.js';

describe('the back-off after a message the cloud could not take', () => {
  it('doubles from the first delay up to the longest while refusals follow each other', () => {
    const backoff = new RedeliveryBackoff({ firstMs: 200, maxMs: 1000 });
    expect(backoff.refusing).toBe(false);
    expect(Array.from({ length: 5 }, () => backoff.nextDelayMs())).toEqual([200, 400, 800, 1000, 1000]);
    expect(backoff.refusing).toBe(true);
  });

  it('starts again from the first delay once a message is taken', () => {
    const backoff = new RedeliveryBackoff({ firstMs: 200, maxMs: 1000 });
    backoff.nextDelayMs();
    backoff.nextDelayMs();
    backoff.reset();
    expect(backoff.refusing).toBe(false);
    expect(backoff.nextDelayMs()).toBe(200);
  });

  it('stays at the longest delay however long the refusals last', () => {
    const backoff = new RedeliveryBackoff(REDELIVERY_DELAYS);
    for (let i = 0; i < 10_000; i++) backoff.nextDelayMs();
    expect(backoff.nextDelayMs()).toBe(REDELIVERY_DELAYS.maxMs);
  });
});
