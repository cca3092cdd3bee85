import { describe, expect, it } from 'vitest';
import { ConfigError, loadCloudConfig } from '../../cloud/foundation/config.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';

/** RELEASE_PUBLIC_KEY is checked strictly at start, in one line (docs/design.md section 12.4.2). */
describe('RELEASE_PUBLIC_KEY', () => {
  it('takes a base64 Ed25519 public key', () => {
    const key = SigningKey.generate().publicKey.base64;
    expect(loadCloudConfig({ RELEASE_PUBLIC_KEY: key }).releasePublicKey).toBe(key);
    expect(loadCloudConfig({}).releasePublicKey).toBeUndefined();
  });

  it.each([
    ['not base64', 'not a key'],
    ['too short', Buffer.alloc(16, 7).toString('base64')],
    ['a small-order point', Buffer.alloc(32, 0).toString('base64')],
  ])('refuses %s in one line naming the variable', (_what, value) => {
    let error: unknown;
    try {
      loadCloudConfig({ RELEASE_PUBLIC_KEY: value });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^RELEASE_PUBLIC_KEY=.* is not valid: use the base64 Ed25519 public key/);
  });
});
