import { Webhook } from 'standardwebhooks';
import { vi } from 'vitest';
import type { Received } from './webhook-receiver.js';

/**
 * What the `standardwebhooks` package makes of a delivery, as a company's receiver would verify it, with its
 * clock set to the cloud's: the package reads the time itself, and a test's cloud runs on a fake clock.
 */
export function standardVerifier(clock: { now(): Date }): (secret: string, got: Received) => unknown {
  return (secret, got) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(clock.now());
    try {
      return new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    } finally {
      vi.useRealTimers();
    }
  };
}
