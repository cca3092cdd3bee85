import { writeFileSync } from 'node:fs';
import {
  releaseManifestSchema,
  type SignedManifest,
  signManifest,
} from '../../../shared/releases/manifest.js';
import type { Row } from '../operator-client.js';
import { UsageError } from '../operator-client.js';
import { readBundle } from './release-bundle.js';
import { makeReleaseKey, readReleaseKey } from './release-key-file.js';

/**
 * `gatelink-admin release keygen` and `release sign` (docs/design.md section 12.4.1): the operator's offline
 * side of a release. Both work on files alone: no cloud, no database, no environment.
 */
export interface ReleaseOutput {
  answer: Row;
  text(): string;
}

export function releaseKeygen(out: string | undefined): ReleaseOutput {
  if (!out) throw new UsageError('release keygen needs --out FILE (a new file for the private key)');
  const key = makeReleaseKey(out);
  const answer: Row = { file: out, public_key: key.publicKey.base64, fingerprint: key.publicKey.fingerprint };
  const text = () =>
    [
      `Release key     ${out} (made, mode 0600: keep it off the cloud, and a copy somewhere safe)`,
      `  public key    ${key.publicKey.base64}`,
      `  fingerprint   ${key.publicKey.fingerprint}`,
      `Give the cloud RELEASE_PUBLIC_KEY=${key.publicKey.base64}: controllers provisioned from then on pin it.`,
    ].join('\n');
  return { answer, text };
}

/** The file `release sign` writes beside the bundle, and `release upload` sends with it. */
export function manifestFileOf(bundle: string): string {
  return `${bundle}.manifest.json`;
}

export async function releaseSign(
  bundle: string | undefined,
  keyFile: string | undefined,
  now: () => number = Date.now,
): Promise<ReleaseOutput> {
  if (!bundle) throw new UsageError('release sign needs the bundle: release sign BUNDLE --key FILE');
  if (!keyFile) throw new UsageError('release sign needs --key FILE (the release key from release keygen)');
  const key = readReleaseKey(keyFile);
  const facts = await readBundle(bundle);
  const manifest = releaseManifestSchema.parse({
    v: 1,
    ...facts.release,
    sha256: facts.sha256,
    size: facts.size,
    signed_at: now(),
  });
  const signed: SignedManifest = signManifest(key, manifest);
  const file = manifestFileOf(bundle);
  writeFileSync(file, `${JSON.stringify(signed, null, 2)}\n`);
  const answer: Row = { file, ...signed, fingerprint: key.publicKey.fingerprint };
  const text = () =>
    [
      `Signed ${manifest.name} ${manifest.version} for ${manifest.arch} (Node ABI ${manifest.node_abi})`,
      `  manifest      ${file}`,
      `  size          ${manifest.size} bytes`,
      `  sha256        ${manifest.sha256}`,
      `  key           ${key.publicKey.fingerprint}`,
      'Upload both to the cloud: release upload (the cloud checks the signature with RELEASE_PUBLIC_KEY).',
    ].join('\n');
  return { answer, text };
}
