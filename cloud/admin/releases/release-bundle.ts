import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { list, type ReadEntry } from 'tar';
import type { z } from 'zod';
import { RELEASE_MAX_BYTES, releaseManifestSchema } from '../../../shared/releases/manifest.js';

/**
 * What signing learns from a bundle (docs/design.md section 12.4.1): its size, its SHA-256 and the release.json
 * at its root, which says what the bundle holds (name, version, arch, Node ABI). The signature then vouches for
 * those bytes and that description together.
 */
export const releaseJsonSchema = releaseManifestSchema.pick({
  name: true,
  version: true,
  arch: true,
  node_abi: true,
});
export type ReleaseJson = z.infer<typeof releaseJsonSchema>;

export interface BundleFacts {
  release: ReleaseJson;
  sha256: string;
  size: number;
}

/** release.json is small; a larger entry of that name is not one. */
const RELEASE_JSON_MAX_BYTES = 4096;

export async function readBundle(file: string): Promise<BundleFacts> {
  const size = bundleSize(file);
  const text = await releaseJsonText(file);
  if (text === undefined)
    throw new Error(`${file} holds no release.json at its root: build it with npm run release:device`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`the release.json in ${file} is not JSON`);
  }
  const release = releaseJsonSchema.safeParse(json);
  if (!release.success) {
    const issue = release.error.issues[0];
    throw new Error(
      `the release.json in ${file} is not a release's: ${issue?.path.join('.')} ${issue?.message}`,
    );
  }
  return { release: release.data, sha256: await sha256Of(file), size };
}

function bundleSize(file: string): number {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error(`${file} is not a file`);
    size = stat.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`the bundle ${file} does not exist`);
    throw error;
  }
  if (size === 0) throw new Error(`the bundle ${file} is empty`);
  if (size > RELEASE_MAX_BYTES) {
    throw new Error(
      `the bundle ${file} is ${size} bytes, more than the ${RELEASE_MAX_BYTES} a release may be`,
    );
  }
  return size;
}

/** The text of the root release.json entry, undefined when there is none; a file that is no gzipped tar throws. */
async function releaseJsonText(file: string): Promise<string | undefined> {
  let text: string | undefined;
  const atRoot = (path: string) => path === 'release.json' || path === './release.json';
  try {
    await list({
      file,
      strict: true,
      filter: (path) => atRoot(path),
      onReadEntry: (entry: ReadEntry) => {
        if (entry.type !== 'File' || entry.size > RELEASE_JSON_MAX_BYTES) return entry.resume();
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => {
          text = Buffer.concat(chunks).toString('utf8');
        });
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${file} is not a gzipped tar (${message})`);
  }
  return text;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}
