import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { afterAll, describe, expect, it } from 'vitest';
// Importing our module also sets ed.hashes.sha512, which @noble needs for its synchronous calls.
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { canonicalJson } from '../../shared/protocol/signing.js';
import {
  compareVersions,
  manifestBytes,
  type ReleaseManifest,
  signManifest,
  verifyManifest,
} from '../../shared/releases/manifest.js';

/**
 * The release manifest's signature (docs/design.md section 12.4.1): what `gatelink-admin release sign` makes and
 * a controller checks with the pinned release key, compared with a second implementation (@noble/ed25519 and
 * OpenSSL), and refused when anything in it changes or another key signed it.
 */

const SEED = new Uint8Array(32).map((_, i) => i + 1);
const KEY = SigningKey.fromSeed(SEED);
const MANIFEST: ReleaseManifest = {
  v: 1,
  name: 'gatelink-device',
  version: '1.2.3-rc.1',
  arch: 'arm64',
  node_abi: '115',
  sha256: 'ab'.repeat(32),
  size: 5_064_982,
  signed_at: 1_795_733_701_164,
};

const dir = mkdtempSync(join(tmpdir(), 'gatelink-release-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the release manifest signature', () => {
  it('signs the tag, a newline and the canonical JSON, as @noble/ed25519 does with the same key', () => {
    const bytes = manifestBytes(MANIFEST);
    expect(new TextDecoder().decode(bytes)).toBe(`gatelink/release/v1\n${canonicalJson(MANIFEST)}`);
    const signed = signManifest(KEY, MANIFEST);
    expect(signed.sig).toBe(Buffer.from(ed.sign(bytes, SEED)).toString('base64'));
    expect(
      ed.verify(Buffer.from(signed.sig, 'base64'), bytes, ed.getPublicKey(SEED), { zip215: false }),
    ).toBe(true);
    expect(verifyManifest(KEY.publicKey, signed)).toBe(true);
  });

  it('verifies with OpenSSL (pkeyutl -verify -rawin) over the same bytes', () => {
    const signed = signManifest(KEY, MANIFEST);
    writeFileSync(join(dir, 'key.pem'), KEY.toPem());
    writeFileSync(join(dir, 'message'), manifestBytes(MANIFEST));
    writeFileSync(join(dir, 'sig'), Buffer.from(signed.sig, 'base64'));
    const output = execFileSync(
      'openssl',
      [
        'pkeyutl',
        '-verify',
        '-rawin',
        '-inkey',
        join(dir, 'key.pem'),
        '-in',
        join(dir, 'message'),
        '-sigfile',
        join(dir, 'sig'),
      ],
      { encoding: 'utf8' },
    );
    expect(output).toContain('Signature Verified Successfully');
  });

  it('accepts a signature made by @noble/ed25519 alone', () => {
    const sig = Buffer.from(ed.sign(manifestBytes(MANIFEST), SEED)).toString('base64');
    expect(verifyManifest(KEY.publicKey, { manifest: MANIFEST, sig })).toBe(true);
  });

  it('refuses a manifest changed after signing: another hash, size, version, arch or ABI', () => {
    const signed = signManifest(KEY, MANIFEST);
    const changes: Partial<ReleaseManifest>[] = [
      { sha256: 'cd'.repeat(32) },
      { size: MANIFEST.size + 1 },
      { version: '1.2.3' },
      { arch: 'x64' },
      { node_abi: '137' },
      { signed_at: MANIFEST.signed_at + 1 },
    ];
    for (const change of changes) {
      expect(verifyManifest(KEY.publicKey, { ...signed, manifest: { ...MANIFEST, ...change } })).toBe(false);
    }
  });

  it('refuses a signature by another key, and a signature that is not one', () => {
    const other = SigningKey.fromSeed(new Uint8Array(32).fill(7));
    expect(verifyManifest(KEY.publicKey, signManifest(other, MANIFEST))).toBe(false);
    const signed = signManifest(KEY, MANIFEST);
    const flipped = Buffer.from(signed.sig, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(verifyManifest(KEY.publicKey, { ...signed, sig: flipped.toString('base64') })).toBe(false);
    expect(verifyManifest(KEY.publicKey, { ...signed, sig: `${signed.sig.slice(0, -3)}!==` })).toBe(false);
  });
});

describe('compareVersions (SemVer precedence)', () => {
  it('orders releases as SemVer 2.0.0 does', () => {
    // SemVer 2.0.0 section 11's own example, oldest first, and numeric parts compared as numbers.
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0',
      '10.0.0',
    ];
    for (let i = 0; i + 1 < ordered.length; i++) {
      const [older, newer] = [ordered[i] ?? '', ordered[i + 1] ?? ''];
      expect(compareVersions(older, newer), `${older} < ${newer}`).toBeLessThan(0);
      expect(compareVersions(newer, older), `${newer} > ${older}`).toBeGreaterThan(0);
    }
    expect(compareVersions('1.2.3', '1.2.3')).toBe(0);
    expect(compareVersions('1.2.3-rc.1', '1.2.3-rc.1')).toBe(0);
  });

  it('refuses what is not a release version', () => {
    expect(() => compareVersions('1.2', '1.2.0')).toThrow(RangeError);
    expect(() => compareVersions('1.2.0', 'v1.2.0')).toThrow('not a release version: v1.2.0');
    expect(() => compareVersions('01.2.0', '1.2.0')).toThrow(RangeError);
  });
});
