import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { create } from 'tar';
import { type SigningKey, strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { DEVICE_CALL_HEADERS, verifyDeviceCall } from '../../shared/protocol/updates.js';
import { type ReleaseManifest, type SignedManifest, signManifest } from '../../shared/releases/manifest.js';

/**
 * Release trees, bundles and homes for the update suites (docs/design.md section 12.4.3). A tree is the compiled
 * controller of this checkout (dist/, built by the global setup) with bin/, a package.json naming its version
 * and release.json, as `npm run build:device` lays it out. Its packages are found through `<home>/node_modules`,
 * a link to the checkout's: Node looks for them upwards from the release folder, so the trees (and bundles) stay
 * small and no suite runs npm.
 */
const ROOT = resolve(import.meta.dirname, '../..');

export interface ReleaseTree {
  folder: string;
  version: string;
}

/** A tree of `version`; `crashAtStart` makes its dist/device/main.js throw as it loads. */
export function makeReleaseTree(
  parent: string,
  version: string,
  options: { crashAtStart?: boolean; arch?: string } = {},
): ReleaseTree {
  const folder = join(parent, `tree-${version}${options.crashAtStart ? '-crash' : ''}`);
  for (const part of ['device', 'shared']) {
    cpSync(join(ROOT, 'dist', part), join(folder, 'dist', part), {
      recursive: true,
      filter: (path) => !path.endsWith('.d.ts'),
    });
  }
  mkdirSync(join(folder, 'bin'), { recursive: true });
  for (const bin of ['gatelink-device.mjs', 'gatelink-boot.mjs']) {
    cpSync(join(ROOT, 'bin', bin), join(folder, 'bin', bin));
  }
  writeFileSync(
    join(folder, 'package.json'),
    JSON.stringify({ name: '@gatelink/device', version, private: true, type: 'module' }),
  );
  writeFileSync(
    join(folder, 'release.json'),
    JSON.stringify({
      name: 'gatelink-device',
      version,
      arch: options.arch ?? process.arch,
      node_abi: process.versions.modules,
    }),
  );
  if (options.crashAtStart) {
    writeFileSync(join(folder, 'dist', 'device', 'main.js'), "throw new Error('this release is broken');\n");
  }
  return { folder, version };
}

/** The tree as a gzipped tar of relative entries, and its manifest signed by `releaseKey`. */
export async function makeBundle(
  tree: ReleaseTree,
  releaseKey: SigningKey,
  patch: Partial<ReleaseManifest> = {},
): Promise<{ bytes: Buffer; release: SignedManifest }> {
  const file = `${tree.folder}.tgz`;
  await create({ gzip: true, file, cwd: tree.folder, portable: true }, ['.']);
  const bytes = readFileSync(file);
  const manifest: ReleaseManifest = {
    v: 1,
    name: 'gatelink-device',
    version: tree.version,
    arch: process.arch === 'arm64' ? 'arm64' : 'x64',
    node_abi: process.versions.modules,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    signed_at: Date.now(),
    ...patch,
  };
  return { bytes, release: signManifest(releaseKey, manifest) };
}

/**
 * A home as install.sh leaves it: the tree copied to releases/<version>-initial, `current` and `known-good`
 * pointing at it, and the link to the checkout's packages.
 */
export function makeHome(parent: string, first: ReleaseTree): string {
  const home = join(parent, 'home');
  const name = `${first.version}-initial`;
  cpSync(first.folder, join(home, 'releases', name), { recursive: true });
  symlinkSync(join('releases', name), join(home, 'current'));
  symlinkSync(join('releases', name), join(home, 'known-good'));
  symlinkSync(join(ROOT, 'node_modules'), join(home, 'node_modules'));
  return home;
}

/**
 * Serves bundles at `/api/device/releases/<id>/bundle` over loopback HTTP, as the cloud's route does: only to
 * a call signed by the device's key (shared/protocol/updates.ts), else 401.
 */
export class BundleServer {
  readonly bundles = new Map<string, Buffer>();
  readonly #server: Server;
  port = 0;
  refused = 0;

  constructor(deviceId: string, devicePublicKey: string) {
    const key = strictPublicKeyFromBase64(devicePublicKey);
    const empty = createHash('sha256').update('').digest('hex');
    this.#server = createServer((request, response) => {
      const path = request.url ?? '';
      const time = Number(request.headers[DEVICE_CALL_HEADERS.time]);
      const signature = String(request.headers[DEVICE_CALL_HEADERS.signature] ?? '');
      const signed =
        request.headers[DEVICE_CALL_HEADERS.device] === deviceId &&
        verifyDeviceCall(key, deviceId, { method: 'GET', path, time, bodySha256: empty }, signature);
      const bytes = this.bundles.get(path);
      if (!signed) this.refused += 1;
      response.writeHead(!signed ? 401 : bytes ? 200 : 404, { 'content-type': 'application/gzip' });
      response.end(signed ? bytes : undefined);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((done) => this.#server.listen(0, '127.0.0.1', done));
    const address = this.#server.address();
    if (address && typeof address === 'object') this.port = address.port;
  }

  /** Serves `bytes` as release `id`; returns its address. */
  serve(id: number, bytes: Buffer): string {
    const path = `/api/device/releases/${id}/bundle`;
    this.bundles.set(path, bytes);
    return `${this.origin}${path}`;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((done) => this.#server.close(() => done()));
  }
}
