import { z } from 'zod';
import { decodeBase64, type SigningKey, type VerifyKey } from '../crypto/ed25519.js';
import { canonicalJson } from '../protocol/signing.js';

/**
 * A controller release (docs/design.md section 12.4): the folder `npm run build:device` writes for one CPU
 * architecture, packed as a gzipped tar, and this manifest, signed by the release key. The release key is the
 * operator's, kept off the cloud if they wish; controllers pin its public half at provisioning. The cloud only
 * stores and hands out what the operator signed: it can choose which release a controller gets, never what a
 * release holds.
 */

/** `process.arch` of the boards a release can be built for. */
export const RELEASE_ARCHES = ['arm64', 'x64'] as const;
export type ReleaseArch = (typeof RELEASE_ARCHES)[number];

/** MAJOR.MINOR.PATCH with an optional pre-release part (SemVer 2.0.0, no build metadata). */
export const RELEASE_VERSION_PATTERN =
  /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;
/** The largest bundle anyone may sign or upload; a controller's tree is about 20 MB. */
export const RELEASE_MAX_BYTES = 200 * 1024 * 1024;
/** The purpose tag of a release signature: it can never verify as a command or an acknowledgement. */
export const RELEASE_TAG = 'gatelink/release/v1';

export const releaseManifestSchema = z.strictObject({
  v: z.literal(1),
  name: z.literal('gatelink-device'),
  version: z.string().max(32).regex(RELEASE_VERSION_PATTERN),
  arch: z.enum(RELEASE_ARCHES),
  /** `process.versions.modules` of the Node.js the native modules were built for: 115 is Node.js 20. */
  node_abi: z.string().regex(/^\d{2,4}$/),
  /** SHA-256 of the bundle file, lower-case hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().positive().max(RELEASE_MAX_BYTES),
  /** When it was signed, Unix milliseconds. */
  signed_at: z.number().int().nonnegative(),
});
export type ReleaseManifest = z.infer<typeof releaseManifestSchema>;

/** What `gatelink-admin release sign` writes beside the bundle (`<bundle>.manifest.json`) and the cloud keeps. */
export const signedManifestSchema = z.strictObject({
  manifest: releaseManifestSchema,
  /** Base64 of the Ed25519 signature over RELEASE_TAG, a newline and the manifest's canonical JSON. */
  sig: z.string().regex(/^[A-Za-z0-9+/]{86}(==)?$/),
});
export type SignedManifest = z.infer<typeof signedManifestSchema>;

export function manifestBytes(manifest: ReleaseManifest): Uint8Array {
  return new TextEncoder().encode(`${RELEASE_TAG}\n${canonicalJson(manifest)}`);
}

export function signManifest(key: SigningKey, manifest: ReleaseManifest): SignedManifest {
  return { manifest, sig: Buffer.from(key.sign(manifestBytes(manifest))).toString('base64') };
}

/** Only a canonical base64 signature by the pinned key over this very manifest verifies. */
export function verifyManifest(key: VerifyKey, signed: SignedManifest): boolean {
  const signature = decodeBase64(signed.sig);
  return signature !== null && key.verify(manifestBytes(signed.manifest), signature);
}

/**
 * SemVer precedence: negative when `a` is older than `b`, 0 when equal, positive when newer. A pre-release is
 * older than its release (1.2.0-rc.1 < 1.2.0); numeric identifiers compare as numbers, others as ASCII.
 */
export function compareVersions(a: string, b: string): number {
  const pa = RELEASE_VERSION_PATTERN.exec(a);
  const pb = RELEASE_VERSION_PATTERN.exec(b);
  if (!pa || !pb) throw new RangeError(`not a release version: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  const ra = pa[4];
  const rb = pb[4];
  if (ra === undefined || rb === undefined) return ra === rb ? 0 : ra === undefined ? 1 : -1;
  const xa = ra.split('.');
  const xb = rb.split('.');
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const ia = xa[i];
    const ib = xb[i];
    if (ia === undefined) return -1;
    if (ib === undefined) return 1;
    const na = /^\d+$/.test(ia);
    const nb = /^\d+$/.test(ib);
    if (na && nb) {
      const d = Number(ia) - Number(ib);
      if (d !== 0) return Math.sign(d);
    } else if (na !== nb) return na ? -1 : 1;
    else if (ia !== ib) return ia < ib ? -1 : 1;
  }
  return 0;
}
