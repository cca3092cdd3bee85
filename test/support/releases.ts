import { createHash } from 'node:crypto';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import type { ProvisionResponse } from '../../shared/protocol/provisioning.js';
import {
  type ReleaseArch,
  type ReleaseManifest,
  type SignedManifest,
  signManifest,
} from '../../shared/releases/manifest.js';
import type { TestCloud } from './cloud.js';

/**
 * Releases and controllers for the suites of the cloud's side of updates (docs/design.md section 12.4.2), made
 * through the cloud's own routes: a manifest for some bytes signed by a release key, its upload to the operator
 * API, and a controller provisioned through the API that reports an arch.
 */

/** The manifest of `bytes` as `gatelink-admin release sign` writes it, signed by `key`. */
export function signedRelease(
  key: SigningKey,
  bytes: Buffer,
  fields: { version: string; arch?: ReleaseArch; signedAt?: number },
): SignedManifest {
  const manifest: ReleaseManifest = {
    v: 1,
    name: 'gatelink-device',
    version: fields.version,
    arch: fields.arch ?? 'arm64',
    node_abi: '115',
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    signed_at: fields.signedAt ?? Date.now(),
  };
  return signManifest(key, manifest);
}

/** `POST /ops/releases` as `gatelink-admin release upload` sends it; the release's id. */
export async function injectRelease(
  cloud: TestCloud,
  bytes: Buffer,
  signed: SignedManifest,
): Promise<number> {
  const uploaded = await cloud.app.inject({
    method: 'POST',
    url: '/ops/releases',
    headers: {
      authorization: `Bearer ${cloud.operatorToken}`,
      'content-type': 'application/gzip',
      'gatelink-release-manifest': Buffer.from(JSON.stringify(signed)).toString('base64'),
    },
    payload: bytes,
  });
  if (uploaded.statusCode !== 201) throw new Error(`upload refused: ${uploaded.body}`);
  return (uploaded.json() as { release: { id: number } }).release.id;
}

/** A controller provisioned through the API on `version`, its arch recorded as if it had reported it. */
export async function apiController(
  cloud: TestCloud,
  options: { label?: string; version?: string; arch?: string } = {},
): Promise<string> {
  const added = await cloud.ops('POST', '/ops/devices', { label: options.label ?? 'Gate' });
  const { provisioning_code } = added.body.device as { provisioning_code: string };
  const provisioned = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: {
      code: provisioning_code,
      public_key: SigningKey.generate().publicKey.base64,
      objects: [{ id: 'gate', label: 'Gate', kind: 'relay' }],
      version: options.version ?? '1.0.0',
    },
  });
  const deviceId = (provisioned.json() as ProvisionResponse).device_id;
  await cloud.ctx.db
    .updateTable('devices')
    .set({ arch: options.arch ?? 'arm64' })
    .where('id', '=', deviceId)
    .execute();
  return deviceId;
}
